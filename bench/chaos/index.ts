// `npm run chaos`: real cycles on the local stack, one fault per run (a kill point, a server fault,
// or a kill at a random moment), then the invariants judged from what the cluster and moto recorded.
// Prints one table row per run and `N passed, N failed`; exits 1 on any violation.
//   npm run -s chaos -- --list            the faults, one per line
//   npm run chaos -- --only <name>[,<name>]   just these (repeatable)
//   npm run chaos -- --random N           N kills at random moments (worker and bridge in turn)
//   npm run chaos -- --reduced            the set `npm test` runs (bench/chaos/faults.ts REDUCED)
// Wrap it in the stack's lock on a shared machine: flock -o /tmp/slipway-stack.lock npm run chaos
import { execFileSync } from 'node:child_process';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectClient } from '../../starter/client.js';
import { allFaults, BASELINES, randomFaults, REDUCED, type Fault } from './faults.js';
import { runFault } from './run.js';
import { header, legend, passed, row } from './table.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

if (args.includes('--list')) {
  for (const f of allFaults()) console.log(`${f.name}\t${f.kind === 'point' ? f.process : 'server'}\t${f.description}`);
  process.exit(0);
}

let faults: Fault[] = allFaults();
const only = args.flatMap((a, i) => (a === '--only' ? (args[i + 1] ?? '').split(',') : [])).filter(Boolean);
if (only.length) {
  const unknown = only.filter((n) => !BASELINES.some((b) => b.name === n) && !faults.some((f) => f.name === n));
  if (unknown.length) {
    console.error(`unknown fault ${unknown.join(', ')} (npm run -s chaos -- --list)`);
    process.exit(2);
  }
  faults = [...BASELINES, ...faults].filter((f) => only.includes(f.name));
}
if (args.includes('--reduced')) faults = faults.filter((f) => REDUCED.includes(f.name));
if (flag('--random') !== undefined) faults = randomFaults(Number(flag('--random')));
else if (!only.length && !args.includes('--reduced')) faults = [...BASELINES, ...faults];

// The local stack up (a no-op when it is), its endpoints in this process, the CRDs current.
execFileSync('bash', ['stack/stack.sh', 'up'], { stdio: ['ignore', 'ignore', 'inherit'] });
for (const m of execFileSync('bash', ['stack/stack.sh', 'env'], { encoding: 'utf8' }).matchAll(/([A-Z_]+)="?([^"\s]*)"?/g)) process.env[m[1]!] = m[2]!;
execFileSync('kubectl', ['apply', '--server-side', '--force-conflicts', '--field-manager=slipway', '-f', 'crds/'], { stdio: ['ignore', 'ignore', 'inherit'] });

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed already
}

const client = await connectClient();
console.log(`chaos: ${faults.length} runs; invariants: ${legend()}`);
console.log(header());
let ok = 0;
let bad = 0;
const t0 = Date.now();
for (const f of faults) {
  const r = await runFault(f, { client, log: (l) => process.stderr.write(`${l}\n`) });
  console.log(row(r, f));
  process.stderr.write(`${f.name}: ${r.verdicts.map((v) => `${v.name}: ${v.detail}`).join('; ')}\n`);
  if (passed(r)) ok++;
  else bad++;
}
console.log(`${ok} passed, ${bad} failed (${((Date.now() - t0) / 60_000).toFixed(1)} min)`);
await client.connection.close();
process.exit(bad ? 1 : 0);
