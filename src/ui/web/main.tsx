// The page: a runs list and one run's view, chosen by the URL's hash (#/ or #/run/<id>[/<task>]), so
// the server serves one document and the token stays in the query string.
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { getJson } from './api.js';
import { LiveList } from './live.js';
import { RunsPage } from './runs-page.js';
import { RunPage } from './run-page.js';
import { shown } from './text.js';

interface Route {
  runId: string | null;
  taskId: string | null;
}

function parseRoute(hash: string): Route {
  const m = /^#\/run\/([^/]+)(?:\/task\/([^/]+))?/.exec(hash);
  if (!m) return { runId: null, taskId: null };
  return { runId: decodeURIComponent(m[1]!), taskId: m[2] === undefined ? null : decodeURIComponent(m[2]) };
}

function App() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  const [, setTick] = useState(0);
  const [info, setInfo] = useState<{ label: string; kind: string } | null>(null);
  const list = useMemo(() => new LiveList(() => setTick((n) => n + 1)), []);
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    getJson<{ label: string; kind: string }>('/api/info').then(setInfo, () => undefined);
    return () => {
      removeEventListener('hashchange', on);
      list.close();
    };
  }, [list]);
  useEffect(() => {
    document.title = route.runId === null ? 'acia ui — runs' : `acia ui — ${route.runId}`;
  }, [route.runId]);
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">acia ui</a>
        <span class="where">{info ? `${info.kind === 'repo' ? 'runs of' : 'fleet'} ${shown(info.label)}` : ''}</span>
        <span class={`conn ${list.connected ? 'on' : 'off'}`} role="status">{list.connected ? 'live' : 'connecting…'}</span>
      </header>
      <main>{route.runId === null ? <RunsPage rows={[...list.rows.values()]} /> : <RunPage key={route.runId} runId={route.runId} taskId={route.taskId} row={list.rows.get(route.runId) ?? null} />}</main>
    </>
  );
}

const root = document.getElementById('app')!;
// The shell's "Loading…" goes: preact renders next to what it did not render itself.
root.textContent = '';
render(<App />, root);
