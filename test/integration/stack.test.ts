// The stack command is idempotent and heals: a second `up` changes nothing, and a component
// that died is back after the next `up`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const home = process.env.SLIPWAY_HOME ?? join(homedir(), '.cache', 'slipway');
const pid = (c: string) => Number(readFileSync(join(home, 'run', `${c}.pid`), 'utf8').trim());
const up = () => execFileSync('bash', ['stack/stack.sh', 'up'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'temporal', 'moto', 'aws-node-sync'];

test('a second `stack up` restarts nothing', () => {
  const before = COMPONENTS.map(pid);
  const out = up();
  expect(COMPONENTS.map(pid)).toEqual(before);
  expect(out).not.toContain('started');
});

test('a killed component is back after the next `stack up`, and the others are untouched', async () => {
  const before = Object.fromEntries(COMPONENTS.map((c) => [c, pid(c)]));
  process.kill(before['kube-scheduler']!, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 500));
  const out = up();
  expect(out).toMatch(/kube-scheduler: started/);
  expect(pid('kube-scheduler')).not.toBe(before['kube-scheduler']);
  for (const c of COMPONENTS.filter((x) => x !== 'kube-scheduler')) expect(pid(c)).toBe(before[c]);
  execFileSync('bash', ['stack/stack.sh', 'status'], { stdio: 'ignore' }); // exits non-zero if any is down
});
