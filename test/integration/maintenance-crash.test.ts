// NM-7.10 crash safety: a real worker process (dist/worker/main.js; run `npm run -s bundle` first) is
// SIGKILLed at a chosen point of a maintenance and started again. After each kill: no pod is evicted
// twice (the audit log holds at most one accepted eviction per pod), T(N) read from the node
// coordinator after the replay equals T(N) read before the kill, and after Complete no node is left
// cordoned or carrying maintenance.slipway.dev/* keys, with the finalizer written once.
// Each kill waits for something observable (an audit event, a status, a Node label) to land it at
// the named point.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import { MAINTENANCE_FINALIZER, MAINTENANCE_STATE_LABEL } from '../../api/node-maintenance.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { maintenanceNodeWorkflowId } from '../../workflows/ids.js';
import { nodeMaintenanceStateQuery, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { appOf, MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const D = (podPriority: number) => ({ podType: 'Default' as const, podPriority });
const isDrained = (s: MaintenanceStatus) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True');

const f = new MaintenanceFixture('it-nm-crash');
const workers: ChildProcess[] = [];
let worker: ChildProcess | undefined;

function startWorker(): void {
  worker = spawn('node', [...WORKER_NODE_FLAGS, 'dist/worker/main.js'], {
    env: { ...process.env, SLIPWAY_TASK_QUEUE: f.taskQueue },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  workers.push(worker);
}

/** SIGKILL: no shutdown, in-flight activities and workflow tasks are lost with the process. */
async function killWorker(): Promise<void> {
  const w = worker!;
  worker = undefined;
  if (w.exitCode !== null || w.signalCode !== null) throw new Error('the worker died before the kill');
  const exited = new Promise((r) => w.once('exit', r));
  w.kill('SIGKILL');
  await exited;
}

async function restart(): Promise<void> {
  await killWorker();
  startWorker();
}

interface Targets {
  lanes: unknown[];
  final: boolean;
  seq: number;
  holders: string[];
}

/** T(N) as the node coordinator answers it (after a restart the query waits for the replay). */
async function targets(node: string): Promise<Targets> {
  const h = f.client.workflow.getHandle(maintenanceNodeWorkflowId(node));
  return waitFor(`T(${node})`, async () => {
    try {
      const s = await h.query(nodeMaintenanceStateQuery);
      // A holder's plan position may move on after the kill (its report was on the way): T(N) may not.
      return { lanes: s.lanes, final: s.final, seq: s.seq, holders: s.holders.map((x) => `${x.name}/${x.stage}`).sort() };
    } catch {
      return undefined;
    }
  }, { timeoutMs: 60_000, intervalMs: 500 });
}

/** Accepted evictions of these Deployments' pods, per pod name (a new pod of the Deployment has a new name). */
async function evictionsPerPod(apps: string[]): Promise<Map<string, number>> {
  const per = new Map<string, number>();
  for (const e of await f.evictions()) {
    if (!apps.includes(appOf(e.objectRef?.name))) continue;
    per.set(e.objectRef!.name!, (per.get(e.objectRef!.name!) ?? 0) + 1);
  }
  return per;
}

async function expectEvictedOnce(apps: string[], evicted: string[]): Promise<void> {
  const per = await evictionsPerPod(apps);
  expect([...per.entries()].filter(([, n]) => n > 1)).toEqual([]);
  expect([...per.keys()].map(appOf).sort()).toEqual([...evicted].sort());
}

/** The pod's deletion by kwok (its grace over): it is gone from the node. */
async function waitDeleted(app: string): Promise<void> {
  await waitFor(`${app} deleted`, async () =>
    (await f.audit()).some((e) => e.verb === 'delete' && e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.objectRef.namespace === f.ns && appOf(e.objectRef.name) === app && /kwok/.test(e.userAgent ?? '')),
  { timeoutMs: 90_000, intervalMs: 200 });
}

async function expectFinalizerOnce(name: string): Promise<void> {
  expect((await f.object(name)).metadata.finalizers?.filter((x) => x === MAINTENANCE_FINALIZER)).toEqual([MAINTENANCE_FINALIZER]);
}

/** NM-2.9 after Complete: uncordoned, no maintenance.slipway.dev/* label or annotation, the workflow ended completed. */
async function expectReleased(h: WorkflowHandle, name: string, nodes: string[]): Promise<void> {
  const done = (await h.result()) as MaintenanceStatus;
  expect(done.completed).toBe(true);
  for (const n of nodes) {
    await waitFor(`${n} released`, async () => {
      const node = await f.c.core.readNode({ name: n });
      return !node.spec?.unschedulable && !Object.keys({ ...node.metadata?.labels, ...node.metadata?.annotations }).some((k) => k.startsWith('maintenance.slipway.dev/'));
    }, { timeoutMs: 60_000 });
  }
  // The bridge removes the finalizer after Complete (NM-2.12); the workflow left exactly one.
  await expectFinalizerOnce(name);
}

async function complete(h: WorkflowHandle): Promise<void> {
  await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
}

/** The spawned worker runs dist/ and prefers dist/workflow-bundle.js: both must be as new as the sources' build. */
function expectFreshDist(): void {
  const built = 'dist/workflows/maintenance/maintenance.js';
  if (!existsSync(built)) throw new Error('dist/ is missing: run `npm run -s bundle` before this test');
  const bundle = 'dist/workflow-bundle.js';
  if (existsSync(bundle) && statSync(bundle).mtimeMs < statSync(built).mtimeMs) throw new Error('dist/workflow-bundle.js is older than dist/workflows: run `npm run -s bundle` before this test');
}

beforeAll(async () => {
  expectFreshDist();
  await f.setup(9, { worker: false });
}, 60_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await f.teardown();
}, 60_000);
afterEach(async () => {
  if (worker) await killWorker();
});

test('NM-7.10 kill right after setStage(Cordon), the cordon in flight: the node is cordoned once the worker is back, T(N) survives a second kill while Cordon holds, Drain and Complete then run as usual', async () => {
  const n = f.nodes[0]!;
  const name = `${f.group}-cordon`;
  await f.pod('a0', n, 0);
  await f.waitApps(['a0']);
  startWorker();
  const h = await f.create(name, { nodeSelector: selectNodes(n), stage: 'Idle', drainPlan: [D(1000)] });
  await f.statusWhen(h, 'Idle preview', (s) => s.stage === 'Idle');
  await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Cordon' }] });
  await restart();

  await waitFor(`${n} cordoned`, async () => {
    const node = await f.c.core.readNode({ name: n });
    return node.spec?.unschedulable === true && node.metadata?.labels?.[MAINTENANCE_STATE_LABEL] === 'Cordoned';
  }, { timeoutMs: 90_000 });
  await expectFinalizerOnce(name);
  const before = await targets(n);
  expect(before.lanes).toEqual([]);
  await restart();
  expect(await targets(n)).toEqual(before);
  expect(await evictionsPerPod(['a0'])).toEqual(new Map()); // Cordon evicts nothing (NM-2.4)

  await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Drain' }] });
  await f.statusWhen(h, 'Drained', isDrained, 120_000);
  await complete(h);
  await expectReleased(h, name, [n]);
  await expectEvictedOnce(['a0'], ['a0']);
}, 240_000);

test('NM-7.10 kill mid-wave while a PDB refuses an eviction: the evicted pod is not evicted again, T(N) is the same after the replay, and the wave finishes once the PDB goes', async () => {
  const n = f.nodes[1]!;
  const name = `${f.group}-pdb`;
  await f.pod('b1', n, 0);
  await f.pod('b2', n, 0);
  await f.waitApps(['b1', 'b2']);
  await f.blockingPdb('b1');
  startWorker();
  const h = await f.create(name, { nodeSelector: selectNodes(n), stage: 'Drain', drainPlan: [D(1000)] });
  await f.statusWhen(h, 'b1 blocked', (s) => s.nodeStatuses.some((x) => x.nodeRef.name === n && x.podsBlocked === 1));
  await waitFor('b2 evicted', async () => (await evictionsPerPod(['b2'])).size === 1);
  const before = await targets(n);
  expect(before.lanes).toHaveLength(1);
  await restart();
  expect(await targets(n)).toEqual(before);
  // The restarted drain retries b1 (refused again) and leaves b2 alone.
  await f.statusWhen(h, 'b1 blocked after the restart', (s) => s.nodeStatuses.some((x) => x.nodeRef.name === n && x.podsBlocked === 1 && x.drainMessage.includes('b1')));
  await expectEvictedOnce(['b1', 'b2'], ['b2']);

  await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'b1', namespace: f.ns });
  await f.statusWhen(h, 'Drained', isDrained, 120_000);
  await complete(h);
  await expectReleased(h, name, [n]);
  await expectEvictedOnce(['b1', 'b2'], ['b1', 'b2']);
}, 240_000);

test('NM-7.10 kill between two plan entries (the first entry\'s pods gone on one node, the other node still blocked): T(N) is the same after the replay and the next entry\'s pod leaves only after the plan moves on', async () => {
  const [n, m] = [f.nodes[2]!, f.nodes[3]!];
  const name = `${f.group}-between`;
  await f.pod('c1', n, 0);
  await f.pod('c2', n, 1500);
  await f.pod('c3', m, 0);
  await f.waitApps(['c1', 'c2', 'c3']);
  await f.blockingPdb('c3');
  startWorker();
  const h = await f.create(name, { nodeSelector: selectNodes(n, m), stage: 'Drain', drainPlan: [D(1000), D(2000)] });
  await waitDeleted('c1');
  await f.statusWhen(h, 'c3 blocked', (s) => s.nodeStatuses.some((x) => x.nodeRef.name === m && x.podsBlocked === 1));
  const before = await targets(n);
  expect(before.lanes).toHaveLength(1);
  await restart();
  expect(await targets(n)).toEqual(before);
  expect(await targets(m)).toMatchObject({ lanes: before.lanes });
  await new Promise((r) => setTimeout(r, 3000));
  await expectEvictedOnce(['c1', 'c2', 'c3'], ['c1']); // c2 is in the next entry: not yet

  await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'c3', namespace: f.ns });
  await f.statusWhen(h, 'Drained', isDrained, 120_000);
  const after = await targets(n);
  expect(after.seq).toBeGreaterThan(before.seq);
  await complete(h);
  await expectReleased(h, name, [n, m]);
  await expectEvictedOnce(['c1', 'c2', 'c3'], ['c1', 'c2', 'c3']);
}, 240_000);

test('NM-7.10 kill right after the node shows Drained: T(N) (final) is the same after the replay, Drained stays True, nothing is evicted again', async () => {
  const n = f.nodes[4]!;
  const name = `${f.group}-drained`;
  await f.pod('d1', n, 0);
  await f.pod('d2', n, 1500);
  await f.waitApps(['d1', 'd2']);
  startWorker();
  const h = await f.create(name, { nodeSelector: selectNodes(n), stage: 'Drain', drainPlan: [D(1000), D(2000)] });
  await waitFor(`${n} labelled Drained`, async () => (await f.c.core.readNode({ name: n })).metadata?.labels?.[MAINTENANCE_STATE_LABEL] === 'Drained', { timeoutMs: 120_000, intervalMs: 200 });
  const before = await targets(n);
  expect(before.final).toBe(true);
  await restart();
  expect(await targets(n)).toEqual(before);
  const s = await f.statusWhen(h, 'Drained after the restart', isDrained);
  expect(s.nodeStatuses.map((x) => x.drainMessage)).toEqual(['Drained']);
  await new Promise((r) => setTimeout(r, 3000));
  expect((await f.c.core.readNode({ name: n })).metadata?.labels?.[MAINTENANCE_STATE_LABEL]).toBe('Drained');
  await complete(h);
  await expectReleased(h, name, [n]);
  await expectEvictedOnce(['d1', 'd2'], ['d1', 'd2']);
}, 240_000);

test('NM-7.10 kill during Complete, the release in flight: the workflow still ends completed and the node is uncordoned with no maintenance keys left', async () => {
  const n = f.nodes[5]!;
  const name = `${f.group}-complete`;
  await f.pod('e1', n, 0);
  await f.waitApps(['e1']);
  startWorker();
  const h = await f.create(name, { nodeSelector: selectNodes(n), stage: 'Drain', drainPlan: [D(1000)] });
  await f.statusWhen(h, 'Drained', isDrained, 120_000);
  await complete(h);
  await restart();
  await expectReleased(h, name, [n]);
  await expectEvictedOnce(['e1'], ['e1']);
}, 240_000);

test('NM-7.10 kill while two maintenances share a node (one waits for the other, a PDB holding the limiting one): T(N) of the shared node is the same after the replay, and both finish and release it', async () => {
  const [one, two, three] = [f.nodes[6]!, f.nodes[7]!, f.nodes[8]!];
  const [an, bn] = [`${f.group}-a`, `${f.group}-b`];
  const apps = ['p1', 'p2', 'q1', 'r1'];
  await f.pod('p1', one, 4000);
  await f.pod('p2', one, 8000);
  await f.pod('q1', two, 5000);
  await f.pod('r1', three, 9000);
  await f.waitApps(apps);
  await f.blockingPdb('q1');
  startWorker();
  const a = await f.create(an, { nodeSelector: selectNodes(one, two), stage: 'Drain', drainPlan: [D(5000), D(15000)] });
  await f.waitHeld(one, an); // a sets T(one) first (targets never shrink, NM-3.3)
  const b = await f.create(bn, { nodeSelector: selectNodes(one, three), stage: 'Drain', drainPlan: [D(10000), D(15000)] });
  await f.statusWhen(b, 'b waits for a', (s) => s.nodeStatuses.some((x) => x.nodeRef.name === one && x.drainMessage === `Waiting for ${an}.`));
  await waitFor('p1 and r1 evicted', async () => (await evictionsPerPod(apps)).size === 2);
  const before = await targets(one);
  expect(before.holders).toHaveLength(2);
  await restart();
  expect(await targets(one)).toEqual(before);
  await new Promise((r) => setTimeout(r, 3000));
  await expectEvictedOnce(apps, ['p1', 'r1']);

  await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'q1', namespace: f.ns });
  for (const h of [a, b]) await f.statusWhen(h, 'Drained', isDrained, 150_000);
  for (const h of [a, b]) await complete(h);
  await expectReleased(a, an, [two]);
  await expectReleased(b, bn, [one, three]);
  await expectEvictedOnce(apps, apps);
}, 300_000);
