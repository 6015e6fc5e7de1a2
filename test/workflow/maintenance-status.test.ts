// What a NodeMaintenance shows while it runs (the status the bridge mirrors, Events, search
// attributes), on the real workflow code with scripted activities (test/support/fake-maintenance.ts).
// Named after the spec statements (../shared/specs/node-maintenance.md).
import { Context } from '@temporalio/activity';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { maintenanceStatusQuery, setStageUpdate } from '../../workflows/messages.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceObjectAttr, maintenanceWorkflowId } from '../../workflows/ids.js';
import { NodesAttr, ObjectAttr, PhaseAttr } from '../../workflows/search-attributes.js';
import { FakeCluster, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();

const ready = (s: MaintenanceStatus) => s.conditions.find((c) => c.type === 'Ready');

test.concurrent('NM-2.17 stageStatuses: one entry per stage acted on, in order, started no earlier than the edit; a skipped stage gets none; Complete has one', async () => {
  const nodes = ['ss-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'ss');
    await maintenanceStatusWhen(h, 'Idle', (s) => s.stageStatuses.length === 1);
    const edit = Date.now();
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] }); // Idle → Complete: Cordon and Drain skipped
    const done = await h.result();
    expect(done.stageStatuses.map((s) => s.name)).toEqual(['Idle', 'Complete']);
    const [idle, complete] = done.stageStatuses.map((s) => Date.parse(s.startTimestamp));
    expect(complete).toBeGreaterThanOrEqual(idle!);
    expect(complete).toBeGreaterThanOrEqual(edit - 1_000); // the workflow's clock is the server's (same machine)
  }, { workflowIds: maintenanceTestIds(['ss'], nodes) });
});

test.concurrent('NM-2.17 a maintenance created at Cordon has [Cordon] only, then [Cordon, Complete]', async () => {
  const nodes = ['sc-1'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'sc', { stage: 'Cordon' });
    const s = await maintenanceStatusWhen(h, 'Cordon acting', (x) => x.stage === 'Cordon' && fake.nodes.get('sc-1')!.cordoned);
    expect(s.stageStatuses.map((x) => x.name)).toEqual(['Cordon']);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    expect((await h.result()).stageStatuses.map((x) => x.name)).toEqual(['Cordon', 'Complete']);
  }, { workflowIds: maintenanceTestIds(['sc'], nodes) });
});

test.concurrent('NM-1.9 Ready is True/Active while the workflow acts, False/SelectsAllNodes while a selector that takes every node waits, True/Completed at the end', async () => {
  const nodes = ['rd-1', 'rd-2'];
  const fake = new FakeCluster(nodes);
  fake.others = 0; // the selector takes every node of the cluster
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'rd', { stage: 'Cordon' });
    const waiting = await maintenanceStatusWhen(h, 'Ready False', (s) => ready(s)?.status === 'False');
    expect(ready(waiting)).toMatchObject({ status: 'False', reason: 'SelectsAllNodes' });
    expect(fake.nodes.get('rd-1')!.cordoned).toBe(false);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    const done = await h.result();
    expect(ready(done)).toMatchObject({ status: 'True', reason: 'Completed' });
    expect(done.conditions.find((c) => c.type === 'SelectsAllNodes')).toMatchObject({ status: 'True', reason: 'SelectsAllNodes' }); // never acknowledged
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
  }, { workflowIds: maintenanceTestIds(['rd'], nodes) });

  const fake2 = new FakeCluster(['ra-1']);
  await env().withWorker(fake2.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'ra', { stage: 'Cordon' });
    const acting = await maintenanceStatusWhen(h, 'Cordon acting', () => fake2.nodes.get('ra-1')!.cordoned);
    expect(ready(await h.query(maintenanceStatusQuery)) ?? ready(acting)).toMatchObject({ status: 'True', reason: 'Active' });
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, { workflowIds: maintenanceTestIds(['ra'], ['ra-1']) });
});

test.concurrent('NM-4.10 a maintenance that selects no node is valid: a Warning Event NoNodesSelected, and in Drain Drained=True with reason NoNodes', async () => {
  const fake = new FakeCluster([]);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'none', { stage: 'Drain' });
    const s = await maintenanceStatusWhen(h, 'Drained', (x) => x.conditions.some((c) => c.type === 'Drained' && c.status === 'True'));
    expect(s.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'True', reason: 'NoNodes' });
    expect(fake.events.filter((e) => e.reason === 'NoNodesSelected')).toEqual([
      expect.objectContaining({ type: 'Warning', involved: expect.objectContaining({ kind: 'NodeMaintenance', name: 'none' }) }),
    ]);
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    expect((await h.result()).completed).toBe(true);
  }, { workflowIds: maintenanceTestIds(['none'], []) });
});

test.concurrent('NM-7.9 search attributes: the maintenance by object, stage and selected nodes; the coordinator by node and its phase', async () => {
  const nodes = ['sa-1', 'sa-2'];
  const fake = new FakeCluster(nodes);
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'sa', { stage: 'Cordon' });
    await waitFor('both cordoned', async () => nodes.every((n) => fake.nodes.get(n)!.cordoned));
    const attrs = await waitFor('maintenance attributes', async () => {
      const a = (await h.describe()).typedSearchAttributes;
      return a.get(PhaseAttr) === 'Cordon' && (a.get(NodesAttr) ?? []).length === 2 ? a : undefined;
    });
    expect(attrs.get(ObjectAttr)).toBe(maintenanceObjectAttr('sa'));
    expect([...(attrs.get(NodesAttr) ?? [])].sort()).toEqual(nodes);
    const coord = env().client.workflow.getHandle(maintenanceNodeWorkflowId('sa-1'));
    const c = await waitFor('coordinator attributes', async () => {
      const a = (await coord.describe()).typedSearchAttributes;
      return a.get(PhaseAttr) === 'Cordoned' ? a : undefined;
    });
    expect(c.get(NodesAttr)).toEqual(['sa-1']);
    // Listing by attribute finds them, as a user does in the Web UI.
    const found: string[] = [];
    for await (const w of env().client.workflow.list({ query: `SlipwayNodes = 'sa-2'` })) found.push(w.workflowId);
    expect(found.sort()).toEqual([maintenanceWorkflowId({ name: 'sa', uid: 'uid-sa' }), maintenanceNodeWorkflowId('sa-2')].sort());
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, { workflowIds: maintenanceTestIds(['sa'], nodes) });
});

test.concurrent('NM-2.18 Drain set while Cordon is still cordoning takes effect after that step: every node is cordoned before its drain starts', async () => {
  const nodes = ['mid-1', 'mid-2', 'mid-3'];
  const fake = new FakeCluster(nodes);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  fake.beforeNodeWrite = async (i) => {
    if (i.node === 'mid-3' && i.holders.length) await gate; // mid-3's cordon is still in flight
  };
  // The drains only need to start: their first step waits until the worker stops.
  const quietDrain = { classifyPods: () => Context.current().cancelled };
  await env().withWorker({ ...fake.activities(), ...quietDrain }, async (tq) => {
    const h = await startMaintenance(env(), tq, 'mid', { stage: 'Cordon' });
    await waitFor('mid-1 and mid-2 cordoned', async () => fake.nodes.get('mid-1')!.cordoned && fake.nodes.get('mid-2')!.cordoned);
    expect(await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Drain' }] })).toMatchObject({ stage: 'Drain' });
    await new Promise((r) => setTimeout(r, 1_500));
    const drainOf = (n: string) => env().client.workflow.getHandle(maintenanceDrainWorkflowId(n)).describe().then((d) => d.startTime.getTime(), () => undefined);
    expect(await drainOf('mid-3')).toBeUndefined(); // not cordoned yet: no drain
    open();
    await maintenanceStatusWhen(h, 'Drain acting', (s) => s.stage === 'Drain');
    const started = await waitFor('a drain per node', async () => {
      const t = await Promise.all(nodes.map(drainOf));
      return t.every((x) => x !== undefined) ? (t as number[]) : undefined;
    });
    for (const [i, n] of nodes.entries()) {
      const cordonedAt = fake.callsOf('writeMaintenanceNodeState').find((c) => (c.input as { node: string }).node === n)!.endedAt!;
      expect(started[i]!).toBeGreaterThanOrEqual(cordonedAt - 50); // the server's clock and ours are the same machine's
      expect(fake.nodes.get(n)!.cordoned).toBe(true);
    }
    expect((await h.query(maintenanceStatusQuery)).stageStatuses.map((s) => s.name)).toEqual(['Cordon', 'Drain']);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, { workflowIds: [...maintenanceTestIds(['mid'], nodes), ...nodes.map(maintenanceDrainWorkflowId)] });
});
