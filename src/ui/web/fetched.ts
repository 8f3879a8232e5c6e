// Loads something once per key (an output, a diff, a reply) and keeps it for the page's life: what a
// run recorded never changes, so nothing is fetched twice.
import { useEffect, useState } from 'preact/hooks';

const cache = new Map<string, Promise<unknown>>();

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'error'; message: string };

export function useFetched<T>(key: string | null, load: () => Promise<T>): Loaded<T> {
  const [v, setV] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    if (key === null) return;
    let live = true;
    let p = cache.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      cache.set(key, p);
      p.catch(() => cache.delete(key));
    }
    setV({ state: 'loading' });
    p.then(
      (value) => live && setV({ state: 'done', value }),
      (e: unknown) => live && setV({ state: 'error', message: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return v;
}
