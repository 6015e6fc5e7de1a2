// A NodeMaintenance may stay in a stage for days: the maintenance workflow and its node
// coordinators continue as new when the server suggests it. This dev server suggests it after a
// few dozen events, so both run through several runs within seconds; the chain must behave as one
// maintenance (same stage history, nodes still held, no second admission check, clean Complete).
import type { Client } from '@temporalio/client';
import { nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { maintenanceSpecChangedUpdate, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceInput } from '../../workflows/maintenance/types.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeCluster, SELECTOR } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 } });

async function runs(client: Client, workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) n++;
  return n;
}

test('a Cordon maintenance and its coordinators continue as new and still act as one: nodes stay held, stage history is kept, Complete releases them', async () => {
  const nodes = ['can-1', 'can-2'];
  const fake = new FakeCluster(nodes);
  const input: MaintenanceInput = { name: 'can', uid: 'uid-can', createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR, stage: 'Idle' }, generation: 1 };
  const id = maintenanceWorkflowId(input);
  await env().withWorker(fake.activities(), async (taskQueue) => {
    const h = await env().client.workflow.start(nodeMaintenanceWorkflow, { taskQueue, workflowId: id, args: [input], workflowExecutionTimeout: '3 minutes' });
    await h.executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, stage: 'Cordon' }, generation: 2 }] });
    await waitFor('both nodes held', async () => nodes.every((n) => fake.nodes.get(n)!.heldBy.join() === 'can'));
    const before = await runs(env().client, id);
    await waitFor('Cordon renewed', async () => (await runs(env().client, id)) > before, { timeoutMs: 90_000, intervalMs: 500 });
    await waitFor('a coordinator renewed', async () => (await runs(env().client, maintenanceNodeWorkflowId('can-1'))) >= 2, { timeoutMs: 90_000, intervalMs: 500 });
    // Still held by exactly this maintenance, and selected once per run (no admission re-check blocking it).
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: true, heldBy: ['can'] });
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    const done = await h.result();
    expect(done.stageStatuses.map((s) => s.name)).toEqual(['Idle', 'Cordon', 'Complete']);
    expect(done.completed).toBe(true);
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: [id, ...nodes.map(maintenanceNodeWorkflowId)] });
}, 240_000);

test('a coordinator waiting for a NodeDisruptionBudget slot continues as new while it waits and after it is granted: one slot, given back at Complete', async () => {
  const nodes = ['canb-1'];
  const fake = new FakeCluster(nodes);
  fake.budget = new FakeBudget(1, 'canb');
  fake.budget.disrupted.set('elsewhere', 'cnr/other');
  const input: MaintenanceInput = { name: 'canb', uid: 'uid-canb', createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR, stage: 'Cordon' }, generation: 1 };
  const id = maintenanceWorkflowId(input);
  const coordinator = maintenanceNodeWorkflowId('canb-1');
  await env().withWorker(fake.activities(), async (taskQueue) => {
    const h = await env().client.workflow.start(nodeMaintenanceWorkflow, { taskQueue, workflowId: id, args: [input], workflowExecutionTimeout: '3 minutes' });
    // Waiting (an ask and a timer every 5 s) renews the coordinator; nothing written across runs.
    await waitFor('the waiting coordinator renewed', async () => (await runs(env().client, coordinator)) >= 2, { timeoutMs: 90_000, intervalMs: 500 });
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
    fake.budget.disrupted.delete('elsewhere');
    await waitFor('held', async () => fake.nodes.get('canb-1')!.heldBy.join() === 'canb');
    const granted = await runs(env().client, coordinator);
    await waitFor('renewed while holding', async () => (await runs(env().client, coordinator)) > granted, { timeoutMs: 90_000, intervalMs: 500 });
    // The slot is carried: the renewed run neither asks again nor loses track of it.
    const asks = fake.budget.callsOf('acquireDisruption').length;
    await new Promise((r) => setTimeout(r, 6_000));
    expect(fake.budget.callsOf('acquireDisruption').length).toBe(asks);
    expect([...fake.budget.disrupted]).toEqual([['canb-1', coordinator]]);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    expect(fake.nodes.get('canb-1')).toMatchObject({ cordoned: false, heldBy: [] });
    expect(fake.budget.disrupted.size).toBe(0);
  }, { workflowIds: [id, coordinator] });
}, 240_000);
