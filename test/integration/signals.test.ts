// #25.3 Logs and signals of the real processes (dist/, rebuilt by the global setup): the worker and
// the bridge exit cleanly on SIGTERM at any moment, before their first connection and as PID 1 too;
// their lines are JSON objects naming their component; SLIPWAY_LOG_LEVEL filters them; the Temporal
// SDK's own lines come through the same logger.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeConfigVia } from '../support/bridge.js';
import { createNamespace, testCluster, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

type Line = Record<string, unknown>;

interface Proc {
  child: ChildProcess;
  /** The process to signal: the node process itself, also when it runs as PID 1 under unshare. */
  pid: () => number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

/** A kubeconfig whose apiserver is a closed port. */
function unreachableKubeconfig(): string {
  const file = join(tmpdir(), `${uniqueName('signals-kubeconfig')}.yaml`);
  writeFileSync(file, kubeConfigVia('https://127.0.0.1:1').exportConfig());
  return file;
}

/** Servers nobody answers on: the process waits for them (one line per try). */
const unreachable = () => ({ KUBECONFIG: unreachableKubeconfig(), TEMPORAL_ADDRESS: '127.0.0.1:1' });

const canUnshare = (() => {
  try {
    execFileSync('unshare', ['--pid', '--fork', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function start(script: string, env: Record<string, string>, asPid1 = false): Proc {
  let out = '';
  let err = '';
  const args = asPid1 ? ['--pid', '--fork', '--kill-child', 'node', script] : [script];
  const child = spawn(asPid1 ? 'unshare' : 'node', args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(child);
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // unshare forks node: the one child of the unshare process is PID 1 of the new namespace.
  const pid = () => (asPid1 ? Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]) : child.pid!);
  return { child, pid, stdout: () => out, stderr: () => err, exited };
}

function lines(p: Proc): Line[] {
  return p
    .stdout()
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        return { notJson: l };
      }
    });
}

/** How the process ended within `ms` of SIGTERM: its exit, or "still running". */
async function sigterm(p: Proc, ms: number): Promise<string> {
  process.kill(p.pid(), 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`still running ${ms} ms after SIGTERM`), ms)));
  const outcome = await Promise.race([p.exited.then((e) => (e.signal ? `killed by ${e.signal}` : `exit ${e.code}`)), late]);
  clearTimeout(timer);
  return outcome;
}

const waitingLine = /kube-apiserver at https:\/\/127\.0\.0\.1:1\/? unreachable/;

describe.each([
  ['worker', 'dist/worker/main.js'],
  ['bridge', 'dist/starter/bridge/main.js'],
])('#25.3 the %s honours SIGTERM before it reaches its servers', (component, script) => {
  test(`#25.3 a ${component} that cannot reach its servers exits cleanly within 2 s of SIGTERM`, async () => {
    const p = start(script, unreachable());
    await waitFor(`the ${component} waiting`, async () => waitingLine.test(p.stdout()), { timeoutMs: 20_000, intervalMs: 100 });
    expect(await sigterm(p, 2000)).toBe('exit 0');
    expect(lines(p).at(-1)).toMatchObject({ component, msg: 'SIGTERM: exiting' });
  }, 30_000);

  (canUnshare ? test : test.skip)(`#25.3 a ${component} running as PID 1 exits within 2 s of SIGTERM`, async () => {
    const p = start(script, unreachable(), true);
    await waitFor(`the ${component} waiting`, async () => waitingLine.test(p.stdout()), { timeoutMs: 20_000, intervalMs: 100 });
    expect(Number(readFileSync(`/proc/${p.pid()}/status`, 'utf8').match(/^NSpid:\s+\d+\s+(\d+)/m)?.[1])).toBe(1);
    expect(await sigterm(p, 2000)).toBe('exit 0');
  }, 30_000);
});

describe('#25.3 the worker logs JSON lines', () => {
  test('#25.3 not on a terminal, every worker line is a JSON object with level, time, msg and component', async () => {
    const p = start('dist/worker/main.js', unreachable());
    await waitFor('the worker waiting', async () => waitingLine.test(p.stdout()), { timeoutMs: 20_000, intervalMs: 100 });
    expect(await sigterm(p, 2000)).toBe('exit 0');
    const all = lines(p);
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const l of all) {
      expect(l).toMatchObject({ level: expect.any(String), time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), msg: expect.any(String), component: 'worker' });
    }
    expect(all[0]).toMatchObject({ level: 'warn', server: 'kube-apiserver at https://127.0.0.1:1', attempt: 1 });
    expect(p.stderr()).toBe('');
  }, 30_000);

  test('#25.3 SLIPWAY_LOG_LEVEL=warn keeps the warnings and drops the info lines', async () => {
    const p = start('dist/worker/main.js', { ...unreachable(), SLIPWAY_LOG_LEVEL: 'warn' });
    await waitFor('the worker waiting', async () => waitingLine.test(p.stdout()), { timeoutMs: 20_000, intervalMs: 100 });
    expect(await sigterm(p, 2000)).toBe('exit 0');
    const levels = lines(p).map((l) => l.level);
    expect(levels.length).toBeGreaterThan(0);
    expect(levels.every((l) => l === 'warn')).toBe(true);
    expect(p.stdout()).not.toContain('SIGTERM: exiting'); // info
  }, 30_000);

  test("#25.3 the Temporal SDK's own lines come through the same logger, and SIGTERM drains a polling worker", async () => {
    const taskQueue = uniqueName('signals-tq');
    const p = start('dist/worker/main.js', { SLIPWAY_TASK_QUEUE: taskQueue });
    const state = (s: string) => lines(p).find((l) => l.msg === 'Worker state changed' && l.state === s);
    await waitFor('the SDK saying the worker runs', async () => state('RUNNING'), { timeoutMs: 60_000, intervalMs: 200 });
    expect(state('RUNNING')).toMatchObject({ component: 'worker', sdk: 'temporal', sdkComponent: 'worker', taskQueue, level: 'info' });
    expect(await sigterm(p, 30_000)).toBe('exit 0');
    expect(state('STOPPED')).toMatchObject({ component: 'worker', sdkComponent: 'worker' });
    expect(lines(p).filter((l) => 'notJson' in l)).toEqual([]);
  }, 120_000);
});

test('#25.3 a running bridge names the Lease it leads on its lines, and stops cleanly on SIGTERM', async () => {
  const c = testCluster();
  const ns = uniqueName('signals');
  await createNamespace(c, ns);
  try {
    const p = start('dist/starter/bridge/main.js', { SLIPWAY_WATCH_NAMESPACE: ns, SLIPWAY_LEADER_NAMESPACE: ns, SLIPWAY_NODE_MAINTENANCES: 'false', SLIPWAY_TASK_QUEUE: uniqueName('signals-tq') });
    const leading = () => lines(p).find((l) => typeof l.msg === 'string' && / is the leader /.test(l.msg));
    await waitFor('the bridge leading', async () => leading(), { timeoutMs: 60_000, intervalMs: 200 });
    expect(leading()).toMatchObject({ component: 'bridge', kind: 'Lease', namespace: ns, name: 'slipway-bridge', level: 'info' });
    expect(await sigterm(p, 30_000)).toBe('exit 0');
    expect(lines(p).find((l) => typeof l.msg === 'string' && /released by/.test(l.msg))).toMatchObject({ kind: 'Lease', namespace: ns });
    expect(lines(p).filter((l) => 'notJson' in l)).toEqual([]);
  } finally {
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  }
}, 120_000);
