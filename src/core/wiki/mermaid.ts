// The chosen plan as a mermaid `graph TD`: tasks as nodes (ids prefixed n_ so `end` and friends are safe),
// guards and typed error edges as labels, joins.
import type { Plan } from '../acm/contracts.js';

export function planMermaid(plan: Plan): string {
  const lines = ['graph TD'];
  for (const t of plan.tasks) lines.push(`  n_${t.id}["${label(`${t.id}: ${t.title ?? t.capability}`)}<br/>${label(t.capability)}"]`);
  for (const e of plan.edges) {
    if (e.onError) lines.push(`  n_${e.from} -. "${label(e.onError)}" .-> n_${e.to}`);
    else if (e.guard) lines.push(`  n_${e.from} -->|"${label(e.guard)}"| n_${e.to}`);
    else lines.push(`  n_${e.from} --> n_${e.to}`);
  }
  for (const j of plan.joins) for (const w of j.waitFor) lines.push(`  n_${w} ==>|"join ${j.mode}"| n_${j.task}`);
  return `\`\`\`mermaid\n${lines.join('\n')}\n\`\`\`\n`;
}

/** Mermaid label text: no quotes, pipes, brackets or newlines that would end the label early. */
function label(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/"/g, '#quot;').replace(/[|<>[\]{}`]/g, ' ').slice(0, 120);
}
