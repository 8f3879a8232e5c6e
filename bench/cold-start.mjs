// cli_cold_start_ratio: `acia --version` over `node -e 0`, interleaved; `acia --help` reported beside it.
import { CLI, median, round, timedSpawn } from './util.mjs';

export async function coldStart({ runs = 15, log = () => {} } = {}) {
  const kinds = { node: ['-e', '0'], version: [CLI, '--version'], help: [CLI, '--help'] };
  const xs = { node: [], version: [], help: [] };
  for (const args of Object.values(kinds)) await timedSpawn(process.execPath, args); // warm the page cache
  for (let i = 0; i < runs; i++) {
    for (const [k, args] of Object.entries(kinds)) {
      const r = await timedSpawn(process.execPath, args);
      if (r.code !== 0) throw new Error(`node ${args.join(' ')} exited ${r.code}`);
      xs[k].push(r.ms);
    }
  }
  const m = Object.fromEntries(Object.entries(xs).map(([k, v]) => [k, median(v)]));
  const ratio = m.version / m.node;
  log(`  node -e 0 ${round(m.node, 1)} ms, acia --version ${round(m.version, 1)} ms, acia --help ${round(m.help, 1)} ms`);
  return {
    cli_cold_start_ratio: {
      value: round(ratio),
      unit: 'x',
      how: `median wall time of \`node dist/bin/acia.js --version\` over \`node -e 0\`, ${runs} interleaved runs each`,
      goal: '<= 1.4',
      met: ratio <= 1.4,
      detail: { medianMs: { node: round(m.node, 1), version: round(m.version, 1), help: round(m.help, 1) } },
    },
    cli_help_cold_start_ratio: {
      value: round(m.help / m.node),
      unit: 'x',
      how: `median wall time of \`node dist/bin/acia.js --help\` over \`node -e 0\`, same interleaved runs`,
      goal: null,
      met: null,
    },
  };
}
