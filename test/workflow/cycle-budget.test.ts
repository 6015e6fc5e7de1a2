// Issue 15 in the cycle workflows, with scripted activities (test/support/fake-cycle.ts keeps an
// in-memory budget): a node enters a batch only with a NodeDisruptionBudget slot, a request whose
// next nodes have none waits saying why (in its message and the nodes' messages) and goes on when
// a slot frees; each node's slot is given back once its Node is deleted, and healing gives back
// the slots of the nodes it puts back.
import { WorkflowFailedError } from '@temporalio/client';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery } from '../../workflows/messages.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeCycle } from '../support/fake-cycle.js';
import { pod } from '../support/fake-drain.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const REASON = 'waiting for NodeDisruptionBudget fake: 1 of 1 nodes disrupted';

describe('cycleNodeRequestWorkflow under a NodeDisruptionBudget', () => {
  test.concurrent('concurrency 3 under a budget of 1: one node at a time, the others wait naming the budget, all cycled, every slot given back', async () => {
    const fake = new FakeCycle('nb', 3);
    fake.budget = new FakeBudget(1);
    fake.drains.get('nb-0')!.pods.push(pod('web'));
    fake.drains.get('nb-0')!.refusals.set('app/web', 'Cannot evict pod as it would violate the pod\'s disruption budget.');
    const { workflowId, input } = fake.request('nb', { cycleSettings: { method: 'Drain', concurrency: 3 } });
    const result = await env().withWorker(fake.activities(), async (taskQueue) => {
      const h = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId, args: [input] });
      const waiting = await waitFor('waiting for the budget', async () => {
        const s = await h.query(cycleStatusQuery);
        return s.message === REASON ? s : undefined;
      }, { timeoutMs: 15_000, intervalMs: 50 });
      expect(waiting.nodes.filter((n) => n.message === REASON).map((n) => n.nodeName).sort()).toEqual(['nb-1', 'nb-2']);
      expect(fake.nodesOf('detachNodes')).toEqual([['nb-0']]); // nothing bought for a node that waits
      expect(fake.nodesOf('cordonNode').flat()).toEqual(['nb-0', 'nb-0']); // the request's cordon and the node cycle's
      fake.drains.get('nb-0')!.refusals.clear();
      return (await h.result()) as CycleStatus;
    }, { workflowIds: [workflowId] });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 3 });
    expect(fake.budget.most).toBe(1);
    expect(fake.budget.disrupted.size).toBe(0);
    expect(fake.nodesOf('detachNodes')).toEqual([['nb-0'], ['nb-1'], ['nb-2']]);
    // each node's slot was released by its cycle right after its Node was deleted
    for (const n of ['nb-0', 'nb-1', 'nb-2']) {
      const del = fake.callsOf('deleteNode').find((c) => c.input === n)!;
      const rel = fake.callsOf('releaseDisruption').find((c) => (c.input as { nodes: string[] }).nodes.length === 1 && (c.input as { nodes: string[] }).nodes[0] === n)!;
      expect(rel.startedAt).toBeGreaterThanOrEqual(del.endedAt!);
    }
  }, 60_000);

  test.concurrent('a failed cycle heals its nodes and gives their slots back', async () => {
    const fake = new FakeCycle('nbheal', 2);
    fake.budget = new FakeBudget(2);
    fake.replacementsReady = false;
    const { workflowId, input } = fake.request('nbheal', { cycleSettings: { method: 'Drain', concurrency: 2 } });
    const err = await env().withWorker(fake.activities(), async (taskQueue) => {
      const h = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId, args: [input] });
      return h.result().then(() => undefined, (e: unknown) => e);
    }, { workflowIds: [workflowId] });
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(fake.budget.most).toBe(2);
    expect(fake.budget.disrupted.size).toBe(0);
    expect(fake.callsOf('healNodes')).toHaveLength(1);
  }, 60_000);
});
