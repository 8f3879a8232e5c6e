// Graph questions plan validation asks of a plan's edges: cycles, ancestors and reachability from the roots.

export interface GraphEdge {
  from: string;
  to: string;
}

/** Every elementary cycle found by a depth-first walk, each once, as `[a, b, c, a]`, starting at its smallest id. */
export function findCycles(nodes: readonly string[], edges: readonly GraphEdge[]): string[][] {
  const next = adjacency(nodes, edges, 'forward');
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles = new Map<string, string[]>();

  // iterative, so a long hostile chain cannot overflow the call stack
  const visit = (start: string): void => {
    const frames: { node: string; children: string[]; i: number }[] = [];
    const open = (node: string): void => {
      state.set(node, 'open');
      stack.push(node);
      frames.push({ node, children: next.get(node) ?? [], i: 0 });
    };
    open(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as (typeof frames)[number];
      const to = frame.children[frame.i++];
      if (to === undefined) {
        frames.pop();
        stack.pop();
        state.set(frame.node, 'done');
        continue;
      }
      const s = state.get(to);
      if (s === 'open') {
        const rotated = rotateToSmallest(stack.slice(stack.indexOf(to)));
        const key = rotated.join('\u0000');
        if (!cycles.has(key)) cycles.set(key, [...rotated, rotated[0] ?? to]);
      } else if (s === undefined) {
        open(to);
      }
    }
  };
  for (const node of nodes) if (!state.has(node)) visit(node);
  return [...cycles.values()];
}

function rotateToSmallest(cycle: string[]): string[] {
  let best = 0;
  cycle.forEach((n, i) => {
    if (n < (cycle[best] ?? n)) best = i;
  });
  return [...cycle.slice(best), ...cycle.slice(0, best)];
}

/** Tasks from which `target` can be reached by following edges (not including `target` unless on a cycle). */
export function ancestorsOf(target: string, nodes: readonly string[], edges: readonly GraphEdge[]): Set<string> {
  return walk([target], adjacency(nodes, edges, 'backward'));
}

/** Roots are tasks with no incoming edge; the rest of the walk follows every edge, error edges included. */
export function reachableFromRoots(nodes: readonly string[], edges: readonly GraphEdge[]): Set<string> {
  const targets = new Set(edges.map((e) => e.to));
  const roots = nodes.filter((n) => !targets.has(n));
  const reached = walk(roots, adjacency(nodes, edges, 'forward'));
  for (const r of roots) reached.add(r);
  return reached;
}

function walk(starts: readonly string[], next: Map<string, string[]>): Set<string> {
  const seen = new Set<string>();
  const queue = [...starts];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const n of next.get(node) ?? []) {
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
    }
  }
  return seen;
}

function adjacency(nodes: readonly string[], edges: readonly GraphEdge[], direction: 'forward' | 'backward'): Map<string, string[]> {
  const known = new Set(nodes);
  const map = new Map<string, string[]>();
  for (const e of edges) {
    if (!known.has(e.from) || !known.has(e.to)) continue;
    const [a, b] = direction === 'forward' ? [e.from, e.to] : [e.to, e.from];
    const list = map.get(a);
    if (list) list.push(b);
    else map.set(a, [b]);
  }
  return map;
}
