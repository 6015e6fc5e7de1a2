// Lifecycle hooks in the cycle workflows, with scripted activities (test/support/fake-cycle.ts): a
// pre-drain hook holds the node's drain before anything is evicted, a pre-terminate hook holds the
// drained node before its delete and termination, and the node's status names the owner meanwhile;
// a pre-drain hook holds every drain the same way (the CLI's, a NodeMaintenance's in targets mode).
// The local stack sees the same from the audit log: test/integration/lifecycle-hooks.test.ts.
import type { WorkflowHandle } from '@temporalio/client';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery } from '../../workflows/messages.js';
import { FakeCycle } from '../support/fake-cycle.js';
import { FakeDrain, pod, receiver, reportWhen, runDrain, statusWhen } from '../support/fake-drain.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
type Request = WorkflowHandle<typeof cycleNodeRequestWorkflow>;

function runRequest(fake: FakeCycle, name: string, during: (h: Request) => Promise<void>): Promise<CycleStatus> {
  const { workflowId, input } = fake.request(name, { cycleSettings: { method: 'Drain', concurrency: 1 } });
  return env().withWorker(
    fake.activities(),
    async (taskQueue) => {
      const h = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId, args: [input] });
      await during(h);
      return h.result();
    },
    { workflowIds: [workflowId] },
  );
}

const nodeWhen = (h: Request, what: string, pred: (n: CycleStatus['nodes'][number]) => boolean) =>
  waitFor(what, async () => (await h.query(cycleStatusQuery)).nodes.find(pred), { timeoutMs: 15_000, intervalMs: 50 });

describe('lifecycle hooks in a node cycle', () => {
  test.concurrent('a pre-drain hook holds the drain before any eviction, named in the node status; once its owner removes it the node is drained and cycled', async () => {
    const fake = new FakeCycle('hookd', 1);
    const drain = fake.drains.get('hookd-0')!;
    drain.pods.push(pod('web'));
    drain.node.preDrainHooks = ['backup'];
    const result = await runRequest(fake, 'hookd', async (h) => {
      const held = await nodeWhen(h, 'the drain held by the hook', (n) => n.phase === 'DrainingPods' && (n.drainMessage ?? '').startsWith('waiting for pre-drain hooks: backup'));
      expect(held.drainMessage).toContain('pre-drain.hook.slipway.dev/<owner>');
      await new Promise((r) => setTimeout(r, 500));
      expect(drain.evictionsAsked()).toEqual([]);
      expect(fake.callsOf('waitForLifecycleHooks').map((c) => (c.input as { stage: string }).stage)).toEqual(['pre-drain']);
      delete drain.node.preDrainHooks;
    });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 1 });
    expect(drain.evictionsAsked()).toEqual(['app/web']);
    expect(fake.callsOf('terminateInstance')).toHaveLength(1);
  });

  test.concurrent('a pre-terminate hook holds the drained node: no delete, no termination, named in the node status; once removed, both', async () => {
    const fake = new FakeCycle('hookt', 1);
    fake.preTerminateHooks.set('hookt-0', ['db-operator']);
    const result = await runRequest(fake, 'hookt', async (h) => {
      const held = await nodeWhen(h, 'the delete held by the hook', (n) => n.phase === 'DeletingNode' && (n.message ?? '').startsWith('waiting for pre-terminate hooks: db-operator'));
      expect(held.message).toContain('pre-terminate.hook.slipway.dev/<owner>');
      await new Promise((r) => setTimeout(r, 500));
      expect(fake.drains.get('hookt-0')!.node.exists).toBe(true);
      expect(fake.callsOf('terminateInstance')).toHaveLength(0);
      fake.preTerminateHooks.set('hookt-0', []);
    });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 1 });
    expect(fake.drains.get('hookt-0')!.node.exists).toBe(false);
    expect(fake.callsOf('deleteNode').map((c) => c.more)).toEqual([[{ unlessHooked: true }], [{ unlessHooked: true }]]);
    expect(fake.callsOf('waitForLifecycleHooks').map((c) => (c.input as { stage: string }).stage)).toEqual(['pre-terminate']);
    expect(fake.callsOf('terminateInstance')).toHaveLength(1);
  });

  test.concurrent('no hook: no wait (the cycle issues the same steps as before, plus the delete’s look)', async () => {
    const fake = new FakeCycle('nohook', 1);
    const result = await runRequest(fake, 'nohook', async () => undefined);
    expect(result).toMatchObject({ phase: 'Successful' });
    expect(fake.callsOf('waitForLifecycleHooks')).toHaveLength(0);
    expect(fake.callsOf('deleteNode')).toHaveLength(1);
  });
});

describe('pre-drain hooks in every drain', () => {
  test.concurrent('a whole-node drain (the CLI\'s) holds in Pending: not cordoned, nothing evicted, the owners in status; released, it drains', async () => {
    const fake = new FakeDrain('cli-hooked', [pod('web')], { preDrainHooks: ['backup', 'db'] });
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const held = await statusWhen(h, 'held by hooks', (s) => (s.hooks?.length ?? 0) > 0);
        expect(held).toMatchObject({ phase: 'Pending', hooks: ['backup', 'db'] });
        expect(held.message).toMatch(/^waiting for pre-drain hooks: backup, db /);
        await new Promise((r) => setTimeout(r, 500));
        expect(fake.node.cordoned).toBe(false);
        expect(fake.evictionsAsked()).toEqual([]);
        delete fake.node.preDrainHooks;
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(result.status.hooks).toBeUndefined();
    expect(fake.evictionsAsked()).toEqual(['app/web']);
  });

  test.concurrent('a NodeMaintenance\'s drain (targets mode) holds too, and its report to the coordinator names the owners', async () => {
    const fake = new FakeDrain('nm-hooked', [pod('low')], { cordoned: true, preDrainHooks: ['storage'] });
    fake.priorities.set('app/low', 100);
    const r = await receiver(env().client, 'receiver/nm-hooked');
    const result = await runDrain(env(), fake, {
      workflowId: 'nm-node/nm-hooked/drain',
      targets: { lanes: [{ podType: 'Default', podPriority: 1000 }], final: true, seq: 1 },
      reportTo: r.id,
      during: async () => {
        const report = await reportWhen(r, 'a report naming the hook', (x) => x.message.startsWith('waiting for pre-drain hooks: storage'));
        expect(report.finished).toBe(false);
        expect(fake.evictionsAsked()).toEqual([]);
        fake.node.preDrainHooks = [];
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(fake.evictionsAsked()).toEqual(['app/low']);
    await r.close();
  });
});
