// Issue 26 §1, idle costs nothing: a maintenance holding nodes, and a coordinator waiting for a
// NodeDisruptionBudget slot, add history events only for what changes. Their waits are long
// activities (activities/maintenance/watch.ts, scripted here by test/support/fake-*.ts) that end on a
// change of the fake cluster, so over a quiet window the histories must not grow at all; before
// issue 26 the coordinator looked at its node every 5 s and the maintenance read its selection every
// 10 s (about 20 and 10 events a minute). The dev server cannot skip time: the window is real, and
// any growth in it fails the test (the figure per hour is bench/idle.ts's).
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeCluster, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** History events of the latest run of each workflow, summed. */
async function events(ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) n += (await env().client.workflow.getHandle(id).fetchHistory()).events?.length ?? 0;
  return n;
}

/** Waits until the histories stop growing for 2 s (at most 20 s), then returns how much they grow over `windowMs`. */
async function growthWhileQuiet(ids: string[], windowMs: number): Promise<number> {
  let last = await events(ids);
  for (let i = 0; i < 10; i++) {
    await sleep(2000);
    const now = await events(ids);
    if (now === last) break;
    last = now;
  }
  const before = await events(ids);
  await sleep(windowMs);
  return (await events(ids)) - before;
}

const maintenanceId = (name: string) => maintenanceWorkflowId({ name, uid: `uid-${name}` });

test.concurrent('#26.1 a held node costs no history while nothing changes; an uncordon is still reverted (NM-2.5) and a joining node still held (NM-2.6)', async () => {
  const nodes = ['idle26-1', 'idle26-2'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'idle26', { stage: 'Cordon' });
    await maintenanceStatusWhen(h, 'both nodes held', (s) => s.nodeStatuses.length === 2 && s.nodeStatuses.every((n) => n.drainMessage === 'Cordoned'));
    const ids = [maintenanceId('idle26'), ...nodes.map(maintenanceNodeWorkflowId)];
    expect(await growthWhileQuiet(ids, 15_000)).toBe(0);

    // The watch returns on an uncordon: the coordinator cordons again and says so.
    fake.nodes.get('idle26-1')!.cordoned = false;
    await waitFor('cordoned again', async () => fake.nodes.get('idle26-1')!.cordoned);
    await waitFor('UncordonReverted', async () => fake.events.some((e) => e.reason === 'UncordonReverted' && e.involved.name === 'idle26-1'));

    // The selection watch returns when a node joins: the maintenance holds it.
    fake.nodes.set('idle26-3', { labels: {}, cordoned: false, heldBy: [] });
    await waitFor('the joining node held', async () => fake.nodes.get('idle26-3')!.heldBy.join() === 'idle26');
    await maintenanceStatusWhen(h, 'three nodes', (s) => s.nodeStatuses.length === 3);

    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    for (const n of fake.nodes.values()) expect(n).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['idle26'], ['idle26-1', 'idle26-2', 'idle26-3']) });
}, 120_000);

test.concurrent('#26.1 a coordinator refused a budget slot costs no history while it waits, and takes the slot once it frees', async () => {
  const nodes = ['idle26b-1'];
  const fake = new FakeCluster(nodes);
  fake.budget = new FakeBudget(1, 'idle26b');
  fake.budget.disrupted.set('elsewhere', 'cnr/other');
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'idle26b', { stage: 'Cordon' });
    await maintenanceStatusWhen(h, 'waiting for the budget', (s) => s.nodeStatuses.some((n) => n.drainMessage.includes('waiting for NodeDisruptionBudget idle26b')));
    const ids = [maintenanceId('idle26b'), maintenanceNodeWorkflowId('idle26b-1')];
    expect(await growthWhileQuiet(ids, 15_000)).toBe(0);
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);

    fake.budget.disrupted.delete('elsewhere');
    await waitFor('held once the slot frees', async () => fake.nodes.get('idle26b-1')!.heldBy.join() === 'idle26b');
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    expect(fake.budget.disrupted.size).toBe(0);
  }, { workflowIds: maintenanceTestIds(['idle26b'], nodes) });
}, 120_000);

test.concurrent('#26.1 no activity runs for a held node while nothing changes; the bridge\'s nodeChanged makes its coordinator re-cordon an uncordon (NM-2.5)', async () => {
  const nodes = ['idle26c-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'idle26c', { stage: 'Cordon' });
    await maintenanceStatusWhen(h, 'held', (s) => s.nodeStatuses.length === 1 && s.nodeStatuses[0]!.drainMessage === 'Cordoned');
    const coordinator = env().client.workflow.getHandle(maintenanceNodeWorkflowId('idle26c-1'));
    await growthWhileQuiet([coordinator.workflowId], 3000);
    // Before #26.1 a heartbeating watchMaintenanceNode ran here for as long as the node was held.
    expect((await coordinator.describe()).raw.pendingActivities ?? []).toEqual([]);

    fake.nodes.get('idle26c-1')!.cordoned = false;
    await waitFor('cordoned again', async () => fake.nodes.get('idle26c-1')!.cordoned);
    const signals = ((await coordinator.fetchHistory()).events ?? []).flatMap((e) => (e.workflowExecutionSignaledEventAttributes?.signalName ? [e.workflowExecutionSignaledEventAttributes.signalName] : []));
    expect(signals).toContain('nodeChanged');
    expect((await coordinator.describe()).raw.pendingActivities ?? []).toEqual([]);

    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    fake.stopBridge();
  }, { workflowIds: maintenanceTestIds(['idle26c'], nodes) });
}, 120_000);
