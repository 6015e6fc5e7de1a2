// The NodeMaintenance stage machine (workflows/maintenance/maintenance.ts, STAGE_HANDLERS) and its
// node coordinators (node.ts), on the real workflow code with scripted activities
// (test/support/fake-maintenance.ts). Tests are named after the spec statements they check
// (../shared/specs/node-maintenance.md). Drain-stage behaviour runs on the local stack (test/integration).
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { maintenanceDeletingSignal, maintenanceSpecChangedUpdate, maintenanceStatusQuery, setStageUpdate } from '../../workflows/messages.js';
import { FakeCluster, SELECTOR, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();


test.concurrent('NM-2.2 Idle touches nothing: no node write, no finalizer; the status previews the selected nodes as Planned', async () => {
  const nodes = ['idle-1', 'idle-2'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'idle');
    const s = await maintenanceStatusWhen(h, 'the preview', (x) => x.nodeStatuses.length === 2 && x.nodeStatuses.every((n) => n.drainMessage.startsWith('Planned:')));
    expect(s.stage).toBe('Idle');
    expect(s.nodeStatuses.map((n) => [n.nodeRef.name, n.drainMessage])).toEqual([['idle-1', 'Planned: no pod to evict, 0 skipped, 0 kept'], ['idle-2', 'Planned: no pod to evict, 0 skipped, 0 kept']]);
    expect(s.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'False', reason: 'NotDraining' });
    // NM-2.11: deleted while Idle, the workflow ends with nothing written.
    await h.signal(maintenanceDeletingSignal);
    await h.result();
    expect(fake.calls.map((c) => c.name).filter((n) => !['selectMaintenanceNodes', 'previewMaintenance'].includes(n))).toEqual([]);
    expect(fake.finalizer).toBe(false);
  }, { workflowIds: maintenanceTestIds(['idle'], nodes) });
});

test.concurrent('NM-2.15 setStage Cordon writes spec.stage, the finalizer comes before the first node write (NM-2.3), every node is cordoned (NM-2.4); Complete releases them (NM-2.9)', async () => {
  const nodes = ['cord-1', 'cord-2'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'cord');
    await maintenanceStatusWhen(h, 'Idle', (x) => x.stage === 'Idle');
    const r = await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Cordon', reason: 'kernel', requestedBy: 'alice@ops-box' }] });
    expect(r).toEqual({ stage: 'Cordon', generation: 2 });
    expect(fake.stage).toBe('Cordon');
    await waitFor('both nodes cordoned', async () => nodes.every((n) => fake.nodes.get(n)!.cordoned && fake.nodes.get(n)!.heldBy.join() === 'cord'));
    const names = fake.calls.map((c) => c.name);
    expect(names.indexOf('ensureMaintenanceFinalizer')).toBeGreaterThan(-1);
    expect(names.indexOf('writeMaintenanceStage')).toBeLessThan(names.indexOf('writeMaintenanceNodeState'));
    expect(names.indexOf('ensureMaintenanceFinalizer')).toBeLessThan(names.indexOf('writeMaintenanceNodeState'));
    expect(fake.nodes.get('cord-1')!.state).toBe('Cordoned');
    const s = await maintenanceStatusWhen(h, 'Cordon shown', (x) => x.nodeStatuses.every((n) => n.drainMessage === 'Cordoned') && x.nodeStatuses.length === 2);
    expect(s.stageStatuses.map((x) => x.name)).toEqual(['Idle', 'Cordon']);
    // #14 §4: who asked is kept with the stage it started (the CLI sends its caller identity).
    expect(s.stageStatuses.map((x) => x.requestedBy)).toEqual([undefined, 'alice@ops-box']);

    // NM-2.15: the validator refuses backwards, unknown; the same stage is a no-op.
    await expect(h.executeUpdate(setStageUpdate, { args: [{ stage: 'Idle' }] })).rejects.toThrow(WorkflowUpdateFailedError);
    const back = await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Idle' }] }).catch((e: WorkflowUpdateFailedError) => e.cause?.message);
    expect(back).toBe('cannot go back from Cordon to Idle');
    const unknown = await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Paused' }] }).catch((e: WorkflowUpdateFailedError) => e.cause?.message);
    expect(unknown).toBe('unknown stage Paused; one of Idle, Cordon, Drain, Complete');
    expect(await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Cordon' }] })).toMatchObject({ stage: 'Cordon' });

    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    const done = await h.result();
    expect(done.completed).toBe(true);
    expect(done.stageStatuses.map((x) => x.name)).toEqual(['Idle', 'Cordon', 'Complete']);
    expect(done.stageStatuses.map((x) => x.requestedBy)).toEqual([undefined, 'alice@ops-box', undefined]);
    expect(done.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Completed' });
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
    // NM-2.15: nothing is accepted once complete (the workflow has ended: the update cannot even reach it).
    await expect(h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] })).rejects.toThrow();
  }, { workflowIds: maintenanceTestIds(['cord'], nodes) });
});

test.concurrent('NM-6.2 two maintenances on one node: held-by names both; the first to Complete leaves the node cordoned and held by the other (E4)', async () => {
  const nodes = ['shared-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const m1 = await startMaintenance(env(), tq, 'shared-m1', { stage: 'Cordon' });
    const m2 = await startMaintenance(env(), tq, 'shared-m2', { stage: 'Cordon' });
    await waitFor('held by both', async () => fake.nodes.get('shared-1')!.heldBy.join() === 'shared-m1,shared-m2');
    await m1.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await m1.result();
    await waitFor('held by m2 only', async () => fake.nodes.get('shared-1')!.heldBy.join() === 'shared-m2');
    expect(fake.nodes.get('shared-1')!.cordoned).toBe(true);
    await m2.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await m2.result();
    expect(fake.nodes.get('shared-1')).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['shared-m1', 'shared-m2'], nodes) });
});

test.concurrent('NM-2.9 a release that lands while the node is being written for its holders is acknowledged only once a write without it has landed', async () => {
  const nodes = ['race-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const m1 = await startMaintenance(env(), tq, 'race-m1', { stage: 'Cordon' });
    await waitFor('held by m1', async () => fake.nodes.get('race-1')!.heldBy.join() === 'race-m1');
    // The write that adds m2 is held in flight; m1 completes meanwhile (its release reaches the coordinator mid-write).
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inFlight = false;
    fake.beforeNodeWrite = async (i) => {
      if (i.holders.join() !== 'race-m1,race-m2') return;
      inFlight = true;
      await gate;
    };
    const m2 = await startMaintenance(env(), tq, 'race-m2', { stage: 'Cordon' });
    await waitFor('the write for m1 and m2 in flight', async () => inFlight);
    await m1.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await new Promise((r) => setTimeout(r, 1_000)); // the release signal reaches the coordinator
    open();
    await m1.result();
    // m1 ended: the node no longer names it (no wait here: the acknowledgement must follow the write).
    expect(fake.nodes.get('race-1')).toMatchObject({ cordoned: true, heldBy: ['race-m2'] });
    await m2.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await m2.result();
    expect(fake.nodes.get('race-1')).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['race-m1', 'race-m2'], nodes) });
});

test.concurrent('NM-2.9(c) a node cordoned before the maintenance stays cordoned after Complete', async () => {
  const nodes = ['pre-1'];
  const fake = new FakeCluster(nodes);
  fake.nodes.get('pre-1')!.cordoned = true;
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'pre', { stage: 'Cordon' });
    await waitFor('held', async () => fake.nodes.get('pre-1')!.heldBy.length === 1);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    expect(fake.nodes.get('pre-1')).toMatchObject({ cordoned: true, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['pre'], nodes) });
});

test.concurrent('NM-2.5 an uncordon of a held node is reverted, with an UncordonReverted Event on the node and the holder', async () => {
  const nodes = ['rev-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'rev', { stage: 'Cordon' });
    await waitFor('held', async () => fake.nodes.get('rev-1')!.cordoned);
    fake.nodes.get('rev-1')!.cordoned = false; // kubectl uncordon
    await waitFor('cordoned again', async () => fake.nodes.get('rev-1')!.cordoned, { timeoutMs: 15_000 });
    await waitFor('the events', async () => fake.events.filter((e) => e.reason === 'UncordonReverted').length === 2);
    expect(fake.events.map((e) => e.involved.kind).sort()).toEqual(['Node', 'NodeMaintenance']);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, { workflowIds: maintenanceTestIds(['rev'], nodes) });
});

test.concurrent('NM-4.8 a selector that takes every node cordons nothing until the allow-all annotation arrives', async () => {
  const nodes = ['all-1', 'all-2'];
  const fake = new FakeCluster(nodes);
  fake.others = 0;
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'all', { stage: 'Cordon' });
    const s = await maintenanceStatusWhen(h, 'SelectsAllNodes', (x) => x.conditions.some((c) => c.type === 'SelectsAllNodes' && c.status === 'True'));
    expect(s.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'SelectsAllNodes' });
    expect(s.message).toContain('maintenance.slipway.dev/allow-all-nodes');
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
    expect(fake.finalizer).toBe(false);
    await h.executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, stage: 'Cordon' }, generation: 2, allowAllNodes: true }] });
    await waitFor('cordoned after the acknowledgement', async () => nodes.every((n) => fake.nodes.get(n)!.cordoned), { timeoutMs: 15_000 });
    const after = await h.query(maintenanceStatusQuery);
    expect(after.conditions.find((c) => c.type === 'SelectsAllNodes')).toMatchObject({ status: 'True', reason: 'Acknowledged' });
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, { workflowIds: maintenanceTestIds(['all'], nodes) });
});

test.concurrent('NM-2.16 specChanged refuses a drainPlan edit and a stage going back, accepts a forward stage', async () => {
  const nodes = ['spec-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'spec');
    await maintenanceStatusWhen(h, 'Idle', (x) => x.stage === 'Idle');
    const plan = await h
      .executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, drainPlan: [{ podPriority: 5 }] }, generation: 2 }] })
      .catch((e: WorkflowUpdateFailedError) => e.cause?.message);
    expect(plan).toBe('spec.drainPlan is immutable');
    await h.executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, stage: 'Cordon' }, generation: 3 }] });
    await waitFor('cordoned', async () => fake.nodes.get('spec-1')!.cordoned);
    const back = await h
      .executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, stage: 'Idle' }, generation: 4 }] })
      .catch((e: WorkflowUpdateFailedError) => e.cause?.message);
    expect(back).toBe('spec.stage cannot go back from Cordon to Idle');
    const sel = await h
      .executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: { nodeSelectorTerms: [] }, stage: 'Cordon' }, generation: 5 }] })
      .catch((e: WorkflowUpdateFailedError) => e.cause?.message);
    expect(sel).toBe('spec.nodeSelector cannot change once the maintenance has left Idle');
    await h.signal(maintenanceDeletingSignal);
    const done = await h.result();
    expect(done.stage).toBe('Complete');
    expect(fake.nodes.get('spec-1')).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['spec'], nodes) });
});

test.concurrent('#24.8 setStage --reason whose write the bridge echoes (specChanged) before the write answers: the stage keeps who asked and the reason, and spec.reason is written', async () => {
  const nodes = ['echo-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'echo', { reason: 'as created' });
    await maintenanceStatusWhen(h, 'Idle', (x) => x.stage === 'Idle');
    // What the bridge does once it sees the write: the object's new generation, as specChanged.
    fake.afterStageWrite = async (i, generation) => {
      await h.executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, stage: i.stage as 'Cordon', reason: fake.reason ?? 'as created' }, generation }] });
    };
    const r = await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Cordon', reason: 'firmware', requestedBy: 'alice@ops-box' }] });
    expect(r).toEqual({ stage: 'Cordon', generation: 2 });
    const s = await maintenanceStatusWhen(h, 'Cordon entered', (x) => x.stageStatuses.some((e) => e.name === 'Cordon'));
    expect(s.stageStatuses.map((x) => [x.name, x.requestedBy])).toEqual([['Idle', undefined], ['Cordon', 'alice@ops-box']]);
    expect(fake.reason).toBe('firmware');
    expect((s as { reason?: string }).reason).toBe('firmware');
    await waitFor('cordoned', async () => fake.nodes.get('echo-1')!.cordoned);
    await h.signal(maintenanceDeletingSignal);
    await h.result();
  }, { workflowIds: maintenanceTestIds(['echo'], nodes) });
});
