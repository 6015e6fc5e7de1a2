// Evacuation crash safety (issue: "kill the worker mid-evacuation and mid-hand-over"): a real worker
// process (dist/worker/main.js, rebuilt by the global setup) is SIGKILLed while the first evacuator is
// active and again just after the hand-over, and started again each time. The witnesses: one
// Evacuation (the same object uid throughout), no eviction of the pod at any time, and the hand-over at the
// deadline measured from the recorded activation, not restarted by the kill.
import { spawn, type ChildProcess } from 'node:child_process';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { EVACUATION, EVACUATOR_ANNOTATION_PREFIX } from '../../api/evacuation.js';
import type { EvacuationObject } from '../../activities/drain/evacuation.js';
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { ExampleEvacuator } from '../support/evacuator.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const f = new MaintenanceFixture('it-nm-evcrash');
const workers: ChildProcess[] = [];
let worker: ChildProcess | undefined;

function startWorker(): void {
  worker = spawn('node', [...WORKER_NODE_FLAGS, 'dist/worker/main.js'], { env: { ...process.env, SLIPWAY_TASK_QUEUE: f.taskQueue }, stdio: ['ignore', 'ignore', 'inherit'] });
  workers.push(worker);
}
async function restartWorker(): Promise<void> {
  const w = worker!;
  if (w.exitCode !== null || w.signalCode !== null) throw new Error('the worker died before the kill');
  const exited = new Promise((r) => w.once('exit', r));
  w.kill('SIGKILL');
  await exited;
  startWorker();
}

beforeAll(async () => {
  await f.setup(1, { worker: false });
  startWorker();
}, 60_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await f.teardown();
}, 60_000);

test('kill mid-evacuation and mid-hand-over: one Evacuation, no eviction, the deadline counted from the recorded activation', async () => {
  // Each step's time, printed: a slow run names the step that was slow.
  const t0 = Date.now();
  const step = (what: string) => console.log(`evacuation crash: ${what} at +${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const node = f.nodes[0]!;
  const custom = f.c.config.makeApiClient(CustomObjectsApi);
  // "silent" goes first and never heartbeats; "mover" takes over at the deadline, heartbeats and moves the pod.
  await f.pod('db', node, 100, {}, {}, { [`${EVACUATOR_ANNOTATION_PREFIX}silent`]: '100', [`${EVACUATOR_ANNOTATION_PREFIX}mover`]: '50' });
  const [db] = await f.waitApps(['db']);
  const uid = db!.metadata!.uid!;
  const read = () => custom.getNamespacedCustomObject({ group: EVACUATION.group, version: EVACUATION.version, plural: EVACUATION.plural, namespace: f.ns, name: uid }).then((o) => o as EvacuationObject, () => undefined);
  const mover = new ExampleEvacuator(f.c, { name: 'mover', namespace: f.ns, heartbeatMs: 2000, workMs: 12_000 }).start();
  try {
    const h = await f.create(`${f.group}-m`, { nodeSelector: selectNodes(node), stage: 'Drain', drainPlan: [{ podType: 'Default', podPriority: MAX_PRIORITY }], drain: { evacuationProgressDeadline: '15s' } });

    // Mid-evacuation: the first evacuator is active.
    const first = await waitFor('silent active', async () => {
      const o = await read();
      return o?.status?.activeEvacuator === 'silent' && o;
    }, { timeoutMs: 90_000, intervalMs: 200 });
    const activatedTime = first.status!.evacuators!.find((e) => e.name === 'silent')!.activatedTime!;
    const activatedAt = Date.parse(activatedTime);
    step('silent active');
    await new Promise((r) => setTimeout(r, 2000));
    await restartWorker();
    step('first kill');

    // The hand-over is decided from the recorded activation: activatedTime is never written again, and
    // control passes no earlier than activation + 15 s. A killed worker's wave wait is noticed by its
    // heartbeat timeout (15 s); its retry ends at the same moment the lost attempt would have.
    let handOverAt = 0;
    const handedOver = await waitFor('mover active', async () => {
      const o = await read();
      if (o?.status?.activeEvacuator !== 'mover') return undefined;
      handOverAt = Date.now();
      return o;
    }, { timeoutMs: 90_000, intervalMs: 200 });
    expect(handedOver.status!.evacuators!.find((e) => e.name === 'silent')!.activatedTime).toBe(activatedTime);
    expect(handOverAt - activatedAt).toBeGreaterThanOrEqual(15_000 - 1000);
    expect(handOverAt - activatedAt).toBeLessThan(15_000 + 15_000 + 6000);
    step('hand-over');
    console.log(`evacuation crash: hand-over ${((handOverAt - activatedAt) / 1000).toFixed(1)} s after activation (deadline 15 s; worker killed at 2 s)`);

    // Mid-hand-over: kill again at once (the hand-over's Event, the next pass may be in flight).
    await restartWorker();
    step('second kill');
    await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 150_000);

    step('drained');
    const audit = (await f.audit()).filter((e) => e.objectRef?.namespace === f.ns);
    // One Evacuation throughout (named by the pod's uid, so never two at once; and never deleted and made again).
    expect(handedOver.metadata.uid).toBe(first.metadata.uid);
    expect(audit.filter((e) => e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'eviction')).toEqual([]);
    // The mover deleted the pod (its own delete, not Slipway's).
    expect(mover.heartbeats.get(uid)).toBeGreaterThanOrEqual(1);
    const handOvers = (await f.c.core.listNamespacedEvent({ namespace: f.ns, fieldSelector: `involvedObject.name=${uid},reason=EvacuatorHandOver` })).items;
    expect(handOvers).toHaveLength(1);
    expect(handOvers[0]!.message).toContain('silent made no progress within 15s: mover takes over');
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await Promise.race([h.result(), new Promise((_, no) => setTimeout(() => no(new Error('the maintenance did not end within 60 s of Complete')), 60_000).unref())]);
  } finally {
    await mover.stop();
  }
}, 420_000); // above the sum of the waits (90 + 90 + 150 + 60 s), so a slow step fails by its own name
