// RM-7.1: a rolling maintenance continues as new (this dev server suggests it after a few dozen
// events) and its record survives: phases, phase times and the recorded bootID, so a reboot seen
// after the renewal is judged against the bootID recorded before it.
import type { Client } from '@temporalio/client';
import { maintenanceStatusQuery, rolloutNodeDoneUpdate, setStageUpdate } from '../../workflows/messages.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { FakeRolloutCluster } from '../support/fake-rollout.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 } });

async function runs(client: Client, workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) n++;
  return n;
}

/** How many drains the coordinator started, over all its runs. */
async function drainStarts(client: Client, node: string): Promise<number> {
  const workflowId = maintenanceNodeWorkflowId(node);
  let n = 0;
  for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const events = (await client.workflow.getHandle(workflowId, w.runId).fetchHistory()).events ?? [];
    n += events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === maintenanceDrainWorkflowId(node)).length;
  }
  return n;
}

const nodeOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)!;

test('RM-7.1 the rollout\'s record is carried across continue-as-new: phases, phase times and the bootID recorded before the work', async () => {
  const fake = new FakeRolloutCluster({ 'rcan-1': undefined, 'rcan-2': undefined });
  const id = maintenanceWorkflowId({ name: 'rcan', uid: 'uid-rcan' });
  await env().withWorker(fake.rolloutActivities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'rcan', { stage: 'Drain', rollout: { completion: { reboot: true } } });
    const before = await maintenanceStatusWhen(h, 'rcan-1 AwaitingWork', (x) => nodeOf(x, 'rcan-1')?.phase === 'AwaitingWork');
    const runsBefore = await runs(env().client, id);
    // Changes renew it: a node joining and leaving (a Waiting node, never started: maxUnavailable 1).
    let i = 0;
    await waitFor('renewed while rcan-1 awaits its work', async () => {
      if ((await runs(env().client, id)) > runsBefore) return true;
      if (i++ % 2) fake.nodes.delete('rcan-x');
      else fake.nodes.set('rcan-x', { labels: {}, cordoned: false, heldBy: [], bootID: 'boot-x', ready: true, annotations: {} });
      return false;
    }, { timeoutMs: 90_000, intervalMs: 300 });
    fake.nodes.delete('rcan-x');
    const after = (await h.query(maintenanceStatusQuery)) as MaintenanceStatus;
    expect(nodeOf(after, 'rcan-1')).toMatchObject({ phase: 'AwaitingWork', bootID: 'boot-rcan-1-1', phaseTimes: nodeOf(before, 'rcan-1').phaseTimes });
    expect(nodeOf(after, 'rcan-2')).toMatchObject({ phase: 'Waiting' });
    // The reboot, seen by the renewed run against the bootID recorded before it.
    fake.nodes.get('rcan-1')!.bootID = 'boot-rcan-1-2';
    await maintenanceStatusWhen(h, 'rcan-2 AwaitingWork', (x) => nodeOf(x, 'rcan-1')?.phase === 'Done' && nodeOf(x, 'rcan-2')?.phase === 'AwaitingWork');
    fake.nodes.get('rcan-2')!.bootID = 'boot-rcan-2-2';
    const s = await maintenanceStatusWhen(h, 'both Done', (x) => x.nodeStatuses.every((n) => n.phase === 'Done') && x.nodeStatuses.length === 2);
    expect(s.rollout).toMatchObject({ phase: 'Done', done: 2 });
    expect(s.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'True' });
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    for (const n of ['rcan-1', 'rcan-2']) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['rcan'], ['rcan-1', 'rcan-2', 'rcan-x']) });
}, 240_000);

test('RM-7.1 #27 a renewed node coordinator decides as the last run did: a drained node\'s targets stay final, its drain is not started again, its state does not go back to Draining', async () => {
  const fake = new FakeRolloutCluster({ 'rcf-1': undefined });
  const coordinator = maintenanceNodeWorkflowId('rcf-1');
  await env().withWorker(fake.rolloutActivities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'rcf', { stage: 'Drain', rollout: { completion: { manual: true } } });
    await maintenanceStatusWhen(h, 'rcf-1 AwaitingWork', (x) => nodeOf(x, 'rcf-1')?.phase === 'AwaitingWork');
    const runsBefore = await runs(env().client, coordinator);
    // Each renewal of the maintenance registers again with the coordinator, whose history grows until it renews too.
    let i = 0;
    await waitFor('the coordinator renewed twice while rcf-1 awaits its work', async () => {
      if ((await runs(env().client, coordinator)) >= runsBefore + 2) return true;
      if (i++ % 2) fake.nodes.delete('rcf-x');
      else fake.nodes.set('rcf-x', { labels: {}, cordoned: false, heldBy: [], bootID: 'boot-x', ready: true, annotations: {} });
      return false;
    }, { timeoutMs: 90_000, intervalMs: 300 });
    fake.nodes.delete('rcf-x');
    const s = (await h.query(maintenanceStatusQuery)) as MaintenanceStatus;
    expect(nodeOf(s, 'rcf-1')).toMatchObject({ phase: 'AwaitingWork' });
    // One drain started (its own renewals aside), and once Drained the node never shows Draining again.
    expect(await drainStarts(env().client, 'rcf-1')).toBe(1);
    const states = fake.callsOf('writeMaintenanceNodeState').map((c) => (c.input as { node: string; state?: string }).state).filter(Boolean);
    expect(states.slice(states.indexOf('Drained'))).not.toContain('Draining');
    await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'rcf-1' }] });
    await maintenanceStatusWhen(h, 'rcf-1 Done', (x) => nodeOf(x, 'rcf-1')?.phase === 'Done');
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    expect(fake.nodes.get('rcf-1')).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: maintenanceTestIds(['rcf'], ['rcf-1', 'rcf-x']) });
}, 240_000);
