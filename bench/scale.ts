// Scale benchmark (SLIPWAY_BENCH=scale): one CycleNodeRequest over a big stub fleet with EC2-length
// names and provider IDs, its stub activities answering at once, on a Temporal dev server of its
// own (the stack's CLI, in memory; the shared stack is not touched). The orchestration alone.
//   SLIPWAY_SCALE_NODES        sizes, a comma list (default 1000,5000,20000)
//   SLIPWAY_SCALE_CONCURRENCY  a comma list of `all` (every node in flight, the hardest case) and numbers (default all,100)
//   SLIPWAY_SCALE_TIMEOUT_S    time cap per run (default 600): a run that reaches it prints what it reached
//   SLIPWAY_SCALE_BARE=1       run without the worker's Node flags and environment (how it ran before #28's RSS fix)
// Each run is a process of its own (bench/scale-one.ts), started as the production worker is
// (WORKER_NODE_FLAGS, WORKER_ENV: its heap, its cache size, its malloc arenas), and prints the largest payload of each kind
// (bench/payload-sizes.ts), the largest history, the largest status the bridge would write, the
// RSS peak of the worker + client, wall and CPU per node, with issue #28's targets beside them.
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../worker/config.js';
import { recordingBundle } from './payload-sizes.js';

const SIZES = (process.env.SLIPWAY_SCALE_NODES ?? '1000,5000,20000').split(',').map((s) => s.trim());
const CONCURRENCIES = (process.env.SLIPWAY_SCALE_CONCURRENCY ?? 'all,100').split(',').map((s) => s.trim());
const TIMEOUT_S = Number(process.env.SLIPWAY_SCALE_TIMEOUT_S ?? 600);
/** Past the cap, the time a run has to stop, list its histories and print before it is killed. */
const GRACE_S = 300;
const BARE = process.env.SLIPWAY_SCALE_BARE === '1';

// Bundled once here (webpack's memory is not the worker's), loaded by every run.
const bundlePath = join(tmpdir(), `slipway-scale-bundle-${process.pid}.js`);
await writeFile(bundlePath, (await recordingBundle()).code);
const one = fileURLToPath(new URL('./scale-one.js', import.meta.url));

try {
  await runAll();
} finally {
  await rm(bundlePath, { force: true });
}

async function runAll(): Promise<void> {
  for (const concurrency of CONCURRENCIES) {
    let baseline: string | undefined;
    for (const nodes of SIZES) {
      const env = { ...process.env, ...(BARE ? {} : WORKER_ENV), SLIPWAY_SCALE_ONE_NODES: nodes, SLIPWAY_SCALE_ONE_CONCURRENCY: concurrency, SLIPWAY_SCALE_BUNDLE: bundlePath, ...(baseline ? { SLIPWAY_SCALE_BASELINE: baseline } : {}) };
      const child = spawn(process.execPath, [...(BARE ? [] : WORKER_NODE_FLAGS), one], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const lines = out.split('\n');
        out = lines.pop()!;
        for (const l of lines) {
          if (l.startsWith('{')) {
            const r = JSON.parse(l) as { finished: boolean };
            if (r.finished && !baseline) baseline = l;
          } else console.log(l);
        }
      });
      const kill = setTimeout(() => child.kill('SIGKILL'), (TIMEOUT_S + GRACE_S) * 1000);
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      clearTimeout(kill);
      if (code !== 0) console.log(`scale: ${nodes} nodes, concurrency ${concurrency}: the run's process ended with ${code ?? 'a kill'} (past the cap of ${TIMEOUT_S} s + ${GRACE_S} s, or crashed): figures above, if any, are what it reached`);
    }
  }
}
