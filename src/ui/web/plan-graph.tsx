// A plan as a graph: tasks laid out by dagre (left to right, in dependency order), coloured by their
// status as it is now, edges drawn by kind: plain order, a guard, an error edge, or wiring the team
// added (a fix task, a re-verify). Every label is an SVG text node.
import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';
import type { Plan, RunState } from '../run-model.js';
import { oneLine } from './text.js';

const W = 200;
const H = 52;

type EdgeKind = 'plain' | 'guard' | 'error' | 'added';

interface Laid {
  width: number;
  height: number;
  nodes: { id: string; x: number; y: number }[];
  edges: { from: string; to: string; kind: EdgeKind; label: string; points: { x: number; y: number }[] }[];
}

/** Where a task the team added came from (its TASK_ADDED parent): drawn as an `added` edge. */
export interface Link {
  from: string;
  to: string;
  label: string;
}

function layout(plan: Plan, addedBy: (id: string) => string | null, links: readonly Link[]): Laid {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 56, edgesep: 12, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const t of plan.tasks) g.setNode(t.id, { width: W, height: H });
  const known = new Set(plan.edges.map((e) => `${e.from}->${e.to}`));
  const edges = [...plan.edges, ...links.filter((l) => !known.has(`${l.from}->${l.to}`)).map((l) => ({ from: l.from, to: l.to, link: l.label }))];
  const kinds = edges.map((e): { kind: EdgeKind; label: string } => {
    if ('link' in e) return { kind: 'added', label: e.link };
    if (e.onError) return { kind: 'error', label: e.onError.toLowerCase().replace(/_/g, ' ') };
    if (e.guard) return { kind: 'guard', label: oneLine(e.guard, 28) };
    return { kind: addedBy(e.to) !== null || addedBy(e.from) !== null ? 'added' : 'plain', label: '' };
  });
  edges.forEach((e, i) => {
    if (!g.hasNode(e.from) || !g.hasNode(e.to)) return;
    const k = kinds[i]!;
    g.setEdge(e.from, e.to, k.label ? { width: k.label.length * 6.5, height: 14, labelpos: 'c' as const } : {}, String(i));
  });
  dagre.layout(g);
  const graph = g.graph();
  return {
    width: Math.max(graph.width ?? 0, W + 16),
    height: Math.max(graph.height ?? 0, H + 16),
    nodes: g.nodes().map((id) => ({ id, x: g.node(id).x ?? 0, y: g.node(id).y ?? 0 })),
    edges: edges.flatMap((e, i) => {
      const laid = g.hasNode(e.from) && g.hasNode(e.to) ? g.edge({ v: e.from, w: e.to, name: String(i) }) : undefined;
      return laid ? [{ from: e.from, to: e.to, ...kinds[i]!, points: laid.points ?? [] }] : [];
    }),
  };
}

export function PlanGraph({ plan, state, links, selected, onSelect, executed }: { plan: Plan; state: RunState; links: readonly Link[]; selected: string | null; onSelect: (id: string) => void; executed: boolean }) {
  const addedBy = (id: string) => state.tasks.get(id)?.addedBy ?? null;
  // Laid out again only when the plan's shape changes, not on every status change.
  const key = `${plan.id}:${plan.tasks.length}:${plan.edges.length}:${links.length}`;
  const g = useMemo(() => layout(plan, addedBy, executed ? links : []), [key]);
  const title = plan.tasks.reduce<Record<string, string>>((m, t) => ((m[t.id] = t.title ?? ''), m), {});
  const cap = plan.tasks.reduce<Record<string, string>>((m, t) => ((m[t.id] = t.capability), m), {});
  return (
    <svg class="plan-graph" viewBox={`0 0 ${g.width} ${g.height}`} width={g.width} height={g.height} role="group" aria-label={`plan ${plan.id}`}>
      <defs>
        <marker id={`arrow-${plan.id}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
        </marker>
      </defs>
      {g.edges.map((e, i) => {
        const d = e.points.map((p, j) => `${j === 0 ? 'M' : 'L'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
        const mid = e.points[Math.floor(e.points.length / 2)]!;
        return (
          <g key={i} class={`edge edge-${e.kind}`} data-edge={`${e.from}->${e.to}`} data-kind={e.kind}>
            <path d={d} marker-end={`url(#arrow-${plan.id})`} />
            {e.label ? (
              <text x={mid.x} y={mid.y - 4} text-anchor="middle" class="edge-label">
                {e.label}
              </text>
            ) : null}
          </g>
        );
      })}
      {g.nodes.map((n) => {
        const t = state.tasks.get(n.id);
        const status = executed ? (t?.status ?? 'pending') : 'not-run';
        const idText = oneLine(n.id, 18);
        const capText = oneLine(cap[n.id] ?? '', 16);
        const again = `${t && t.attempts > 1 ? ` ×${t.attempts}` : ''}${t?.merged ? ' merged' : ''}`;
        const titleText = oneLine(title[n.id] ?? '', 26);
        // Its name (the SVG title, also the tooltip) says in words what the colour says.
        const label = `${idText} ${capText} ${titleText}: ${status}${t && t.attempts > 1 ? `, attempt ${t.attempts}` : ''}${t?.merged ? ', merged into the run branch' : ''}`;
        return (
          <g
            key={n.id}
            class={`node st-${status}${selected === n.id ? ' selected' : ''}`}
            data-task={n.id}
            data-status={status}
            transform={`translate(${(n.x - W / 2).toFixed(1)} ${(n.y - H / 2).toFixed(1)})`}
            tabIndex={executed ? 0 : -1}
            role={executed ? 'button' : 'img'}
            onClick={executed ? () => onSelect(n.id) : undefined}
            onKeyDown={executed ? (ev: KeyboardEvent) => (ev.key === 'Enter' || ev.key === ' ') && onSelect(n.id) : undefined}
          >
            <title>{label}</title>
            <rect width={W} height={H} rx="6" />
            <text x="10" y="20" class="node-id">
              {idText} <tspan class="node-cap">{capText}</tspan>
              {again ? <tspan class="node-cap">{again}</tspan> : null}
            </text>
            <text x="10" y="38" class="node-title">
              {titleText}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
