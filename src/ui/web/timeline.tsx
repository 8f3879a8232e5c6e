// The run over time: a lane for the PM's planning and one per task, in the order tasks first started;
// each attempt a bar from its start to its end (still growing while it runs). Parallel tasks show as
// bars that overlap in time.
import type { ActivityIndex } from '../run-model.js';
import { duration, oneLine } from './text.js';

const LANE = 22;
const LABEL = 120;
const WIDTH = 900;

export function Timeline({ activity, start, end, planned, selected, onSelect }: { activity: ActivityIndex; start: string | null; end: string; planned: string | null; selected: string | null; onSelect: (id: string) => void }) {
  if (start === null) return <p class="empty">Nothing has happened yet.</p>;
  const t0 = Date.parse(start);
  const span = Math.max(1000, Date.parse(end) - t0);
  const x = (iso: string) => LABEL + ((Date.parse(iso) - t0) / span) * (WIDTH - LABEL - 8);
  const lanes = activity.lanes;
  const height = (lanes.length + 1) * LANE + 20;
  return (
    <svg class="timeline" viewBox={`0 0 ${WIDTH} ${height}`} width="100%" role="group" aria-label={`timeline over ${duration(span)}`}>
      <text x="4" y={LANE - 7} class="lane-label">
        pm (plan)
      </text>
      {planned ? <rect x={x(start)} y={4} width={Math.max(2, x(planned) - x(start))} height={LANE - 8} class="bar bar-completed" /> : <rect x={x(start)} y={4} width={Math.max(2, x(end) - x(start))} height={LANE - 8} class="bar bar-running" />}
      {lanes.map((id, i) => {
        const a = activity.tasks.get(id)!;
        const y = (i + 1) * LANE;
        return (
          <g key={id} class={`lane${selected === id ? ' selected' : ''}`} data-lane={id} onClick={() => onSelect(id)}>
            <text x="4" y={y + LANE - 7} class="lane-label">
              {oneLine(id, 16)}
            </text>
            {a.attempts.map((at, j) => (
              <rect key={j} x={x(at.start)} y={y + 4} width={Math.max(2, x(at.end ?? end) - x(at.start))} height={LANE - 8} class={`bar bar-${at.outcome}`}>
                <title>{`${id} attempt ${at.attempt}: ${at.outcome}, ${duration(Date.parse(at.end ?? end) - Date.parse(at.start))}`}</title>
              </rect>
            ))}
          </g>
        );
      })}
      <text x={LABEL} y={height - 4} class="axis">
        0s
      </text>
      <text x={WIDTH - 8} y={height - 4} text-anchor="end" class="axis">
        {duration(span)}
      </text>
    </svg>
  );
}
