// The worker and the bridge started while Temporal or the kube-apiserver is down (a rollout, a
// reboot, a server restarted first): each keeps trying with one clear log line per try and no
// stack trace, answers /readyz 503 naming what it waits for, and works once the server is back
// (the worker polls its task queue; the bridge starts the workflow of a new request). The servers
// are reached through a TCP proxy that stays closed until the test opens it.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKube } from '../../kube/client.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { temporalSettings } from '../../shared/temporal.js';
import { ApiserverProxy, kubeConfigVia } from '../support/bridge.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';

const g = new Guard('bi-proc');
const procs: ChildProcess[] = [];
const proxies: ApiserverProxy[] = [];

beforeAll(() => g.setup(), 120_000);
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  for (const p of proxies) await p.stop();
  await g.teardown();
});

/** A proxy to `upstream` on a port that is free, and closed until open() (the server is "down"). */
async function downServer(upstream: string): Promise<{ port: number; open: () => Promise<void> }> {
  const proxy = new ApiserverProxy(new URL(upstream));
  proxies.push(proxy);
  await proxy.start();
  const port = proxy.port;
  await proxy.stop();
  return { port, open: () => proxy.start(port) };
}

async function freePort(): Promise<number> {
  const p = new ApiserverProxy(new URL('http://127.0.0.1:1'));
  await p.start();
  await p.stop();
  return p.port;
}

interface Proc {
  output: () => string;
  probe: number;
}

function start(script: string, env: Record<string, string>): Proc {
  let out = '';
  const probe = Number(env.SLIPWAY_PROBE_PORT);
  const p = spawn('node', [...WORKER_NODE_FLAGS, script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  procs.push(p);
  return { output: () => out, probe };
}

async function readyz(p: Proc): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${p.probe}/readyz`).catch(() => undefined);
  return res ? `${res.status} ${(await res.text()).trim()}` : 'no answer';
}

/** Trying, saying so in one line per try, not ready, no stack trace. */
async function expectWaiting(p: Proc, line: RegExp, notReady: string): Promise<void> {
  await waitFor(`the log line ${line}`, async () => line.test(p.output()), { timeoutMs: 20_000, intervalMs: 200 });
  expect(await readyz(p)).toBe(`503 not ready: ${notReady}`);
  expect(p.output()).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
}

async function pollers(taskQueue: string): Promise<number> {
  const { namespace } = temporalSettings();
  const r = await g.f.client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType: 1 });
  return r.pollers?.length ?? 0;
}

function kubeconfigVia(port: number): string {
  const file = join(tmpdir(), `${uniqueName('bi-kubeconfig')}.yaml`);
  writeFileSync(file, kubeConfigVia(`https://127.0.0.1:${port}`).exportConfig());
  return file;
}

const apiserver = () => createKube().config.getCurrentCluster()!.server;
const temporal = () => `http://${temporalSettings().address}`;

test('a worker started while Temporal is down waits, says so, is not ready; once Temporal is up it polls', async () => {
  const m = await g.mark();
  const down = await downServer(temporal());
  const taskQueue = uniqueName('bi-proc-tq');
  const w = start('dist/worker/main.js', { TEMPORAL_ADDRESS: `127.0.0.1:${down.port}`, SLIPWAY_TASK_QUEUE: taskQueue, SLIPWAY_PROBE_PORT: String(await freePort()) });
  await expectWaiting(w, new RegExp(`Temporal at 127\\.0\\.0\\.1:${down.port} unreachable \\(transport error: Connection refused\\); retrying in \\d+s \\(attempt \\d+\\)`), `waiting for Temporal at 127.0.0.1:${down.port}`);
  expect(await pollers(taskQueue)).toBe(0);
  await down.open();
  await waitFor('the worker ready', async () => (await readyz(w)).startsWith('200'), { timeoutMs: 40_000, intervalMs: 500 });
  await waitFor('the worker polling', async () => (await pollers(taskQueue)) > 0, { timeoutMs: 20_000 });
  expect(w.output()).toMatch(/Temporal at 127\.0\.0\.1:\d+: reached after \d+ attempts/);
  await g.untouched(m);
}, 90_000);

test('a worker started while the kube-apiserver is down waits, says so, is not ready; once it answers the worker polls', async () => {
  const m = await g.mark();
  const down = await downServer(apiserver());
  const taskQueue = uniqueName('bi-proc-tq');
  const w = start('dist/worker/main.js', { KUBECONFIG: kubeconfigVia(down.port), SLIPWAY_TASK_QUEUE: taskQueue, SLIPWAY_PROBE_PORT: String(await freePort()) });
  await expectWaiting(w, new RegExp(`kube-apiserver at https://127\\.0\\.0\\.1:${down.port} unreachable \\(.*ECONNREFUSED.*\\); retrying in \\d+s`), `waiting for the kube-apiserver at https://127.0.0.1:${down.port}`);
  await down.open();
  await waitFor('the worker ready', async () => (await readyz(w)).startsWith('200'), { timeoutMs: 40_000, intervalMs: 500 });
  await waitFor('the worker polling', async () => (await pollers(taskQueue)) > 0, { timeoutMs: 20_000 });
  await g.untouched(m);
}, 90_000);

/** The bridge process, watching the guard's namespace only, its workflows on the guard worker's queue. */
const bridgeEnv = (over: Record<string, string>) => ({
  SLIPWAY_WATCH_NAMESPACE: g.f.ns,
  SLIPWAY_LEADER_NAMESPACE: g.f.ns,
  SLIPWAY_TASK_QUEUE: g.f.taskQueue,
  SLIPWAY_NODE_MAINTENANCES: 'false',
  ...over,
});

/** The bridge works: a new request (for a node group that does not exist: harmless) gets its workflow. */
async function bridgeWorks(): Promise<void> {
  const name = uniqueName('bi-proc');
  await g.f.createCnr(name, g.cnr({ nodeGroupName: `${g.group}-nope` }));
  await waitFor(`${name} started by the bridge`, async () => (await g.f.getCnr(name))?.status?.workflowId, { timeoutMs: 30_000 });
}

test('a bridge started while Temporal is down waits, says so, is not ready; once Temporal is up it reconciles', async () => {
  const m = await g.mark();
  const down = await downServer(temporal());
  const b = start('dist/starter/bridge/main.js', bridgeEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${down.port}`, SLIPWAY_PROBE_PORT: String(await freePort()) }));
  await expectWaiting(b, new RegExp(`Temporal at 127\\.0\\.0\\.1:${down.port} unreachable \\(.+\\); retrying in \\d+s`), `waiting for Temporal at 127.0.0.1:${down.port}`);
  await down.open();
  await waitFor('the bridge ready', async () => (await readyz(b)).startsWith('200'), { timeoutMs: 40_000, intervalMs: 500 });
  await bridgeWorks();
  procs.pop()!.kill('SIGTERM');
  await g.untouched(m);
}, 90_000);

test('a bridge started while the kube-apiserver is down waits, says so, is not ready; once it answers it reconciles', async () => {
  const m = await g.mark();
  const down = await downServer(apiserver());
  const b = start('dist/starter/bridge/main.js', bridgeEnv({ KUBECONFIG: kubeconfigVia(down.port), SLIPWAY_PROBE_PORT: String(await freePort()) }));
  await expectWaiting(b, new RegExp(`kube-apiserver at https://127\\.0\\.0\\.1:${down.port} unreachable \\(.*ECONNREFUSED.*\\); retrying in \\d+s`), `waiting for the kube-apiserver at https://127.0.0.1:${down.port}`);
  await down.open();
  await waitFor('the bridge ready', async () => (await readyz(b)).startsWith('200'), { timeoutMs: 40_000, intervalMs: 500 });
  await bridgeWorks();
  procs.pop()!.kill('SIGTERM');
  await g.untouched(m);
}, 90_000);
