// Text someone else wrote (a goal, a model reply, tool output, a diff, a wiki page) reaches the page
// only as text nodes, never as HTML. Controls a terminal would act on (ESC sequences, a bare CR) and
// bidirectional overrides are shown as visible escapes, so what is displayed is what is there.

// C0 controls except TAB and LF, DEL, and the C1 range.
// eslint-disable-next-line no-control-regex -- showing control characters is the point
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

export function shown(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}

/** One line of it, cut to `max` characters. */
export function oneLine(text: string, max = 160): string {
  const flat = shown(text.replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function money(usd: number | null): string {
  return usd === null ? '?' : `$${usd.toFixed(4)}`;
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${s % 60}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function shortTime(iso: string | null): string {
  return iso === null ? '—' : new Date(iso).toLocaleString();
}
