// A NodeMaintenance may stay in a stage for days: the maintenance workflow and its node
// coordinators continue as new when the server suggests it. This dev server suggests it after a
// few dozen events, so both run through several runs within seconds; the chain must behave as one
// maintenance (same stage history, nodes still held, no second admission check, clean Complete).
import type { Client } from '@temporalio/client';
import { nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { maintenanceSpecChangedUpdate, maintenanceStatusQuery, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceInput } from '../../workflows/maintenance/types.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeCluster, SELECTOR } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 } });

/**
 * Waiting costs no history (issue 26): runs renew only as changes come. `poke` makes one (an uncordon,
 * a node joining or leaving, a new refusal), every 300 ms until `renewed` holds.
 */
async function pokeUntil(what: string, poke: (i: number) => void, renewed: () => Promise<boolean>): Promise<void> {
  let i = 0;
  await waitFor(what, async () => {
    if (await renewed()) return true;
    poke(i++);
    return false;
  }, { timeoutMs: 90_000, intervalMs: 300 });
}

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
    // A node joining and leaving changes the maintenance; an uncordon (reverted) changes can-1's coordinator.
    const membership = (i: number) => (i % 2 ? fake.nodes.delete('can-x') : fake.nodes.set('can-x', { labels: {}, cordoned: false, heldBy: [] }));
    await pokeUntil('Cordon renewed', membership, async () => (await runs(env().client, id)) > before);
    if (fake.nodes.delete('can-x')) await waitFor('can-x released', async () => !(await h.query(maintenanceStatusQuery)).nodeStatuses.some((n) => n.nodeRef.name === 'can-x'));
    const uncordon = () => (fake.nodes.get('can-1')!.cordoned = false);
    await pokeUntil('a coordinator renewed', uncordon, async () => (await runs(env().client, maintenanceNodeWorkflowId('can-1'))) >= 2);
    await waitFor('can-1 cordoned again', async () => fake.nodes.get('can-1')!.cordoned);
    // Still held by exactly this maintenance, and selected once per run (no admission re-check blocking it).
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: true, heldBy: ['can'] });
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    const done = await h.result();
    expect(done.stageStatuses.map((s) => s.name)).toEqual(['Idle', 'Cordon', 'Complete']);
    expect(done.completed).toBe(true);
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: [id, ...[...nodes, 'can-x'].map(maintenanceNodeWorkflowId)] });
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
    // A refusal that changes (another holder comes and goes) wakes the waiting coordinator; enough of them renew it; nothing written across runs.
    const refusal = (i: number) => (i % 2 ? fake.budget.disrupted.delete('elsewhere-2') : fake.budget.disrupted.set('elsewhere-2', 'cnr/other'));
    await pokeUntil('the waiting coordinator renewed', refusal, async () => (await runs(env().client, coordinator)) >= 2);
    fake.budget.disrupted.delete('elsewhere-2');
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
    fake.budget.disrupted.delete('elsewhere');
    await waitFor('held', async () => fake.nodes.get('canb-1')!.heldBy.join() === 'canb');
    const granted = await runs(env().client, coordinator);
    await pokeUntil('renewed while holding', () => (fake.nodes.get('canb-1')!.cordoned = false), async () => (await runs(env().client, coordinator)) > granted);
    await waitFor('canb-1 cordoned again', async () => fake.nodes.get('canb-1')!.cordoned);
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
