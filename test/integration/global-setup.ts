// Brings the local stack up (a no-op when it already runs), exports its endpoints to the tests, and
// installs the CRDs (idempotent).
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { readdirSync } from 'node:fs';

export default function globalSetup(): void {
  // dist/ (and the workflow bundle the production worker loads) is what the stack's glue and the
  // out-of-process workers in the resilience tests run: rebuild both, never test a stale bundle
  // (bundle:dev: the image's code plus stack/, whose fake-node tool runs below).
  execFileSync('npm', ['run', '-s', 'bundle:dev'], { stdio: ['ignore', 'inherit', 'inherit'] });
  execFileSync('bash', ['stack/stack.sh', 'up'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const env = execFileSync('bash', ['stack/stack.sh', 'env'], { encoding: 'utf8' });
  for (const m of env.matchAll(/^export (.*)$/gm)) {
    for (const [, k, v] of m[1]!.matchAll(/(\w+)="?([^"\s]*)"?/g)) process.env[k!] = v!;
  }
  installCrds();
  // Fake nodes an interrupted earlier run left behind would load kwok and the control plane. kwok
  // v0.7.0 keeps heartbeating nodes whose deletion it missed under load (its lease and the
  // garbage collector then fight over them); a restart makes it list the nodes afresh.
  execFileSync('node', ['dist/stack/kwok/nodes.js', '--delete-groups-prefixed', 'it-,bench-,chaos-'], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('bash', ['stack/stack.sh', 'restart', 'kwok'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

// kubectl applies the checked-in crds/ (kept current by the unit test) without a compiled dist/;
// kubectl is optional in the README, so without it the compiled installer does the same.
function installCrds(): void {
  const out: ExecFileSyncOptions = { stdio: ['ignore', 'ignore', 'inherit'] };
  try {
    execFileSync('kubectl', ['apply', '--server-side', '--force-conflicts', '--field-manager=slipway', '-f', 'crds/'], out);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    execFileSync('node', ['dist/starter/install-crds.js'], out);
    return;
  }
  // Only the CRDs have an Established condition (crds/ also holds the admission policies).
  const crds = readdirSync('crds').filter((f) => f.startsWith('slipway.dev_')).flatMap((f) => ['-f', `crds/${f}`]);
  execFileSync('kubectl', ['wait', '--for', 'condition=established', '--timeout=60s', ...crds], out);
}
