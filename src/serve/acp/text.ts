// Model and tool text shown in an editor: C0/C1 control characters (escape sequences) removed, newline
// and tab kept, so a prompt-injected agent cannot drive the client's terminal rendering.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function stripControls(text: string): string {
  return text.replace(CONTROLS, '');
}
