// The cycle workflows as they are today (request, node cycle, node-group lock, and the drain as a
// child), on a dev server of their own with scripted activities (test/support/fake-cycle.ts):
// the happy path, healing from each phase, the spec-change update's refusals, and the lock under
// contention. Asserted through the workflows' messages and the activities they call, so the tests
// outlive a rewrite of the workflow code.
import { WorkflowFailedError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { nodeGroupLockId } from '../../workflows/ids.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery, specChangedUpdate } from '../../workflows/messages.js';
import { FakeCycle } from '../support/fake-cycle.js';
import { pod } from '../support/fake-drain.js';
import type { PodVerdict } from '../../shared/drain.js';
import { nodeStatus, podLeftEvents, requestStatus } from '../../starter/bridge/cycle/status.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
type Request = WorkflowHandle<typeof cycleNodeRequestWorkflow>;

/** Runs one request for the fake's group; `during` acts while it runs. Resolves with its status, or rejects as it fails. */
function runRequest(fake: FakeCycle, name: string, spec: Parameters<FakeCycle['request']>[1] = {}, during?: (h: Request) => Promise<void>): Promise<CycleStatus> {
  const { workflowId, input } = fake.request(name, spec);
  return env().withWorker(
    fake.activities(),
    async (taskQueue) => {
      const h = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId, args: [input] });
      await during?.(h);
      return h.result();
    },
    { workflowIds: [workflowId] },
  );
}

const statusWhen = (h: Request, what: string, pred: (s: CycleStatus) => boolean) =>
  waitFor(what, async () => {
    const s = await h.query(cycleStatusQuery);
    return pred(s) ? s : undefined;
  }, { timeoutMs: 15_000, intervalMs: 50 });

const lockReleased = async (client: Client, fake: FakeCycle) => (await client.workflow.getHandle(nodeGroupLockId(fake.provider, fake.group)).describe()).status.name === 'COMPLETED';

/** The reason an update was refused (the validator's message). */
async function refusal(h: Request, spec: Parameters<FakeCycle['request']>[1]): Promise<string> {
  const err = await h.executeUpdate(specChangedUpdate, { args: [{ spec: spec as never }] }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  return ((err as WorkflowUpdateFailedError).cause as Error).message;
}

describe('cycleNodeRequestWorkflow', () => {
  test.concurrent('cycles node by node: detach, replacements, scale-down protection, cordon, then a node cycle each (drain, delete Node, terminate); Successful', async () => {
    const fake = new FakeCycle('ok', 2);
    fake.drains.get('ok-0')!.pods.push(pod('web'));
    const result = await runRequest(fake, 'ok', { cycleSettings: { method: 'Drain', concurrency: 1 } });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 2, nodesTotal: 2, message: '2 nodes cycled' });
    expect(result.nodes.map((n) => [n.nodeName, n.phase])).toEqual([['ok-0', 'Successful'], ['ok-1', 'Successful']]);
    expect(result.nodes[0]!.evicted).toBe(1);
    expect(fake.nodesOf('detachNodes')).toEqual([['ok-0'], ['ok-1']]);
    expect(fake.nodesOf('deleteNode')).toEqual([['ok-0'], ['ok-1']]);
    expect(fake.callsOf('terminateInstance')).toHaveLength(2);
    expect(fake.callsOf('healNodes')).toHaveLength(0);
    // Surge first: each node's replacement is Ready before the node is cordoned.
    const at = (step: string, i: number) => fake.callsOf(step)[i]!.startedAt;
    expect(at('waitForReplacements', 0)).toBeLessThan(at('cordonNode', 0));
    expect(fake.drains.get('ok-0')!.evictionsAsked()).toEqual(['app/web']);
    expect(await lockReleased(env().client, fake)).toBe(true);
  });

  test.concurrent('#24.2 #24.3 a node whose pod kept coming back: its status, the request\'s message and a PodLeftOnNode Event name the pod left on it, with every eviction counted', async () => {
    const fake = new FakeCycle('sticky', 1);
    const drain = fake.drains.get('sticky-0')!;
    let n = 0;
    const sticky = (): PodVerdict => pod(`sticky-${n++}`, { controller: 'ReplicaSet app/sticky', toleratesUnschedulable: true });
    drain.pods.push(sticky(), pod('keep', { action: 'Skip', reason: 'DrainRule keep' }));
    drain.recreate = (left) => (left.controller === 'ReplicaSet app/sticky' ? sticky() : undefined);
    const result = await runRequest(fake, 'sticky', { cycleSettings: { method: 'Drain' } });
    expect(drain.evictionsAsked()).toEqual(['app/sticky-0', 'app/sticky-1', 'app/sticky-2', 'app/sticky-3']);
    const node = result.nodes[0]!;
    const reason = 'returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain); left on the node';
    expect(node).toMatchObject({ phase: 'Successful', evicted: 4, returning: [{ pod: 'app/sticky-4', reason }] });
    expect(node.message).toBe(
      '4 Pods evicted; 1 Pod skipped (1 by DrainRule keep: app/keep); 1 Pod left on the Node: app/sticky-4 (returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain))',
    );
    expect(result.message).toBe('1 node cycled; 1 Pod was left on a node when deleted, having come back after every eviction: sticky-0 (app/sticky-4)');
    // What the bridge makes of it: the request's node entry, the CycleNodeStatus, and the Event.
    const wf = { workflowId: fake.request('sticky').workflowId };
    const status = requestStatus({ prev: undefined, workflow: wf, state: result, observedGeneration: 1, now: new Date() });
    expect(status.nodes![0]!.message).toContain('1 Pod left on the Node: app/sticky-4');
    expect(nodeStatus(node).returning).toEqual([{ pod: 'app/sticky-4', reason }]);
    expect(podLeftEvents(undefined, result.nodes, wf.workflowId)).toEqual([expect.objectContaining({ type: 'Warning', reason: 'PodLeftOnNode', message: expect.stringContaining('Pod app/sticky-4 was on node sticky-0 when the node was deleted') })]);
  }, 30_000);

  test.concurrent('while nodes drain, the request\'s message counts the nodes still draining (not the batch\'s count at its start)', async () => {
    const fake = new FakeCycle('count', 2);
    fake.drains.get('count-1')!.pods.push(pod('held'));
    fake.drains.get('count-1')!.refusals.set('app/held', 'Cannot evict pod as it would violate the pod\'s disruption budget.');
    const result = await runRequest(fake, 'count', { cycleSettings: { method: 'Drain', concurrency: 2 } }, async (h) => {
      const two = await statusWhen(h, 'both draining', (s) => s.phase === 'WaitingTermination');
      expect(two.message).toBe('2 nodes draining');
      const one = await statusWhen(h, 'one cycled', (s) => s.nodes.some((n) => n.nodeName === 'count-0' && n.phase === 'Successful'));
      expect(one.message).toBe('1 node draining');
      fake.drains.get('count-1')!.refusals.clear();
    });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 2 });
  });

  test.concurrent("a batch's new nodes get scale-down back only once that batch's old nodes are gone, not when the next batch starts", async () => {
    const fake = new FakeCycle('release', 6);
    for (let i = 0; i < 6; i++) fake.drains.get(`release-${i}`)!.pods.push(pod(`p${i}`));
    const result = await runRequest(fake, 'release', { cycleSettings: { method: 'Drain', concurrency: 2 } });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 6 });
    const batches = fake.nodesOf('detachNodes');
    const protectedSets = fake.nodesOf('protectFromScaleDown');
    expect(protectedSets).toHaveLength(batches.length);
    const releases = fake.callsOf('releaseScaleDown').filter((c) => ((c.input as { nodes?: string[] }).nodes ?? []).length > 0);
    const deleted = new Map(fake.callsOf('deleteNode').map((c) => [c.input as string, c.startedAt]));
    batches.forEach((old, i) => {
      const release = releases.find((c) => JSON.stringify((c.input as { nodes: string[] }).nodes) === JSON.stringify(protectedSets[i]));
      expect(release).toBeDefined();
      for (const n of old) expect(release!.startedAt).toBeGreaterThan(deleted.get(n)!);
    });
  });

  test.concurrent('an invalid request fails with InvalidCycleRequest; nothing is touched, locked or healed', async () => {
    const fake = new FakeCycle('invalid', 1);
    fake.errors = ['spec.selector: selector must not be empty: it would match every node'];
    const err = await runRequest(fake, 'invalid').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('InvalidCycleRequest');
    expect(fake.calls.map((c) => c.name)).toEqual(['resolveCycle']);
  });
});

describe('healing', () => {
  /** Asserts what healing leaves: the in-flight nodes back, scale-down protection gone, the lock free, Failed. */
  async function expectHealed(fake: FakeCycle, name: string, err: unknown, inFlight: string[], message: string | RegExp) {
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(fake.nodesOf('healNodes')).toEqual([inFlight]);
    const release = fake.callsOf('releaseScaleDown').at(-1)!;
    expect(release.startedAt).toBeGreaterThan(fake.callsOf('healNodes')[0]!.startedAt);
    expect(await lockReleased(env().client, fake)).toBe(true);
    const s = await env().client.workflow.getHandle(fake.request(name).workflowId).query(cycleStatusQuery);
    expect(s.phase).toBe('Failed');
    expect(s.message).toMatch(message);
    return s;
  }

  test.concurrent('from ScalingUp: replacements that never come put the detached nodes back', async () => {
    const fake = new FakeCycle('heal-scale', 2);
    fake.replacementsReady = false;
    const err = await runRequest(fake, 'heal-scale', { cycleSettings: { method: 'Drain', concurrency: 2 } }).catch((e: unknown) => e);
    await expectHealed(fake, 'heal-scale', err, ['heal-scale-0', 'heal-scale-1'], /no replacement became Ready/);
    expect(fake.callsOf('cordonNode')).toHaveLength(0);
  });

  test.concurrent('from CordoningNode: a failed pre-termination check puts the cordoned batch back', async () => {
    const fake = new FakeCycle('heal-cordon', 1);
    fake.preTerminationFailures = ['http://10.0.0.1/ready: 503'];
    const checks = [{ triggerEndpoint: 'http://{{ .NodeIP }}/drain', healthCheck: { endpoint: 'http://{{ .NodeIP }}/ready', waitPeriod: '1s' } }];
    const err = await runRequest(fake, 'heal-cordon', { preTerminationChecks: checks }).catch((e: unknown) => e);
    await expectHealed(fake, 'heal-cordon', err, ['heal-cordon-0'], /pre-termination checks failed on heal-cordon-0/);
    expect(fake.callsOf('deleteNode')).toHaveLength(0);
  });

  test.concurrent('from WaitingTermination: a node whose drain fails stops the other node cycles, and every node not yet terminated goes back', async () => {
    const fake = new FakeCycle('heal-drain', 2);
    fake.drains.get('heal-drain-0')!.pods.push(pod('web'));
    fake.drains.get('heal-drain-0')!.refusals.set('app/web', 'The disruption budget web needs 2 healthy pods and has 2 currently');
    fake.held.add('terminateInstance'); // heal-drain-1 is still in flight when heal-drain-0 fails
    const spec = { cycleSettings: { method: 'Drain' as const, concurrency: 2 }, drain: { podEvictionTimeout: { after: '1s', policy: 'Fail' as const } } };
    const err = await runRequest(fake, 'heal-drain', spec).catch((e: unknown) => e);
    const s = await expectHealed(fake, 'heal-drain', err, ['heal-drain-0', 'heal-drain-1'], /node cycle failed: .*eviction refused for longer than podEvictionTimeout/);
    expect(s.nodes.map((n) => n.phase)).toEqual(['Failed', 'Failed']);
    expect(fake.callsOf('terminateInstance').every((c) => c.output === undefined)).toBe(true);
  });

  test.concurrent('on cancellation (the request was deleted): the detached nodes go back, and the cycle ends Failed', async () => {
    const fake = new FakeCycle('heal-cancel', 1);
    fake.held.add('waitForReplacements');
    const err = await runRequest(fake, 'heal-cancel', {}, async (h) => {
      await statusWhen(h, 'ScalingUp', (s) => s.phase === 'ScalingUp');
      await h.cancel();
    }).catch((e: unknown) => e);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    await expectHealed(fake, 'heal-cancel', err, ['heal-cancel-0'], 'cancelled (the request was deleted); re-attached heal-cancel-0');
  });
});

describe('the specChanged update', () => {
  const spec = { cycleSettings: { method: 'Drain' as const, concurrency: 1 } };
  /** Runs a request held in ScalingUp while `during` sends updates, then lets it finish. */
  const whileScalingUp = (fake: FakeCycle, name: string, during: (h: Request) => Promise<void>) => {
    fake.held.add('waitForReplacements');
    return runRequest(fake, name, spec, async (h) => {
      await statusWhen(h, 'ScalingUp', (s) => s.phase === 'ScalingUp');
      await during(h);
      fake.release('waitForReplacements');
    });
  };
  const update = (h: Request, name: string, change: object) => h.executeUpdate(specChangedUpdate, { args: [{ spec: { ...fakeSpec(name), ...change } }] });
  const fakeSpec = (name: string) => ({ ...new FakeCycle(name, 0).request(name, spec).input.spec });

  test.concurrent('accepts a new concurrency and answers the one now in effect; nodes in flight go up to it from then on', async () => {
    const fake = new FakeCycle('spec-ok', 3);
    fake.held.add('terminateInstance'); // node cycles stay in flight until released
    const result = await whileScalingUp(fake, 'spec-ok', async (h) => {
      expect(await update(h, 'spec-ok', { cycleSettings: { method: 'Drain', concurrency: 2 } })).toEqual({ concurrency: 2 });
      expect((await h.query(cycleStatusQuery)).concurrency).toBe(2);
      fake.release('waitForReplacements');
      // At concurrency 1 the second node would wait for the first to be terminated; at 2 it starts now.
      await waitFor('a second node in flight', async () => fake.callsOf('detachNodes').length === 2, { timeoutMs: 10_000, intervalMs: 20 });
      await new Promise((r) => setTimeout(r, 300));
      expect(fake.nodesOf('detachNodes')).toEqual([['spec-ok-0'], ['spec-ok-1']]); // never a third
      fake.release('terminateInstance');
    });
    expect(result.phase).toBe('Successful');
    expect(fake.nodesOf('detachNodes')).toEqual([['spec-ok-0'], ['spec-ok-1'], ['spec-ok-2']]);
  });

  test.concurrent('refuses a change to any field but concurrency, naming the field', async () => {
    const fake = new FakeCycle('spec-field', 1);
    await whileScalingUp(fake, 'spec-field', async (h) => {
      expect(await refusal(h, { ...fakeSpec('spec-field'), nodeGroupName: 'other' })).toBe('only spec.cycleSettings.concurrency may change while a cycle runs; changed: spec.nodeGroupName');
      expect(await refusal(h, { ...fakeSpec('spec-field'), cycleSettings: { method: 'Wait', concurrency: 1 } })).toBe(
        'only spec.cycleSettings.concurrency may change while a cycle runs; changed: spec.cycleSettings.method',
      );
    });
  });

  test.concurrent('refuses a concurrency that is not a whole number ≥ 1', async () => {
    const fake = new FakeCycle('spec-zero', 1);
    await whileScalingUp(fake, 'spec-zero', async (h) => {
      expect(await refusal(h, { ...fakeSpec('spec-zero'), cycleSettings: { method: 'Drain', concurrency: 0 } })).toBe('spec.cycleSettings.concurrency must be a whole number ≥ 1, not 0');
      expect((await h.query(cycleStatusQuery)).concurrency).toBe(1);
    });
  });

  test.concurrent('refuses any change once the cycle is healing', async () => {
    const fake = new FakeCycle('spec-heal', 1);
    fake.replacementsReady = false;
    fake.held.add('healNodes');
    await runRequest(fake, 'spec-heal', spec, async (h) => {
      await statusWhen(h, 'Healing', (s) => s.phase === 'Healing');
      expect(await refusal(h, { ...fakeSpec('spec-heal'), cycleSettings: { method: 'Drain', concurrency: 3 } })).toBe('the cycle has ended (Healing): spec changes no longer apply');
      fake.release('healNodes');
    }).catch(() => undefined);
  });
});

describe('the node-group lock', () => {
  test.concurrent('a second request on the same node group waits, says why, and starts only once the first has released the group', async () => {
    const fake = new FakeCycle('locked', 1);
    fake.held.add('waitForReplacements');
    await env().withWorker(fake.activities(), async (taskQueue) => {
      const first = fake.request('first');
      const second = fake.request('second');
      const h1 = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId: first.workflowId, args: [first.input] });
      const s1 = await statusWhen(h1, 'the first ScalingUp', (s) => s.phase === 'ScalingUp');
      expect(s1.phase).toBe('ScalingUp');
      const h2 = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId: second.workflowId, args: [second.input] });
      const waiting = await statusWhen(h2, 'the second waiting', (s) => s.message.startsWith('waiting for node group'));
      expect(waiting).toMatchObject({ phase: 'Pending', message: `waiting for node group locked: another request is cycling it (lock ${nodeGroupLockId('fake', 'locked')})` });
      expect(fake.callsOf('resolveCycle')).toHaveLength(2);
      expect(fake.callsOf('detachNodes')).toHaveLength(1); // the second touches nothing while it waits
      fake.release('waitForReplacements');
      expect((await h1.result()).phase).toBe('Successful');
      expect((await h2.result()).phase).toBe('Successful');
    }, { workflowIds: [fake.request('first').workflowId, fake.request('second').workflowId] });
    // The second picked its nodes afresh after the wait, and detached only once the first was done.
    expect(fake.callsOf('resolveCycle')).toHaveLength(3);
    const detaches = fake.callsOf('detachNodes');
    expect(detaches).toHaveLength(2);
    expect(detaches[1]!.startedAt).toBeGreaterThan(fake.callsOf('terminateInstance')[0]!.endedAt!);
  }, 30_000);
});

describe('#26.1 idle costs nothing: the cycle\'s waits', () => {
  /** History events of a workflow, once it has stood still for a moment (its last step's events written). */
  const settled = async (h: Request) => {
    let n = -1;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const m = (await h.fetchHistory()).events!.length;
      if (m === n) return m;
      n = m;
    }
  };

  test.concurrent('#26.1 a request waiting for a held node-group lock adds no history while nothing changes (was a retry every 5-30 s), and starts once the lock ends', async () => {
    const fake = new FakeCycle('idle-lock', 1);
    fake.held.add('waitForReplacements');
    await env().withWorker(fake.activities(), async (taskQueue) => {
      const first = fake.request('idle-first');
      const second = fake.request('idle-second');
      const h1 = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId: first.workflowId, args: [first.input] });
      await statusWhen(h1, 'the first ScalingUp', (s) => s.phase === 'ScalingUp');
      const h2 = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId: second.workflowId, args: [second.input] });
      await statusWhen(h2, 'the second waiting', (s) => s.message.startsWith('waiting for node group'));
      const before = await settled(h2);
      const windowS = 12; // longer than the old first retry (5 s) and its next (10 s later)
      await new Promise((r) => setTimeout(r, windowS * 1000));
      const grown = (await h2.fetchHistory()).events!.length - before;
      const perHour = (grown * 3600) / windowS;
      expect({ grown, perHour }).toEqual({ grown: 0, perHour: 0 }); // bound: <= 30 an hour
      fake.release('waitForReplacements');
      expect((await h1.result()).phase).toBe('Successful');
      expect((await h2.result()).phase).toBe('Successful');
    }, { workflowIds: [fake.request('idle-first').workflowId, fake.request('idle-second').workflowId] });
    expect(fake.callsOf('detachNodes')).toHaveLength(2);
  }, 60_000);
});

describe('NM-7.6 nodes a NodeMaintenance holds', () => {
  test.concurrent('the batch takes the next unheld node; with only held nodes left the request stays in its phase, names the maintenance, and cycles the node once it is let go', async () => {
    const fake = new FakeCycle('held', 2);
    fake.maintenanceHolds.set('held-0', { maintenance: 'kernel-upgrade', stage: 'Drain' });
    let letGo = 0;
    const result = await runRequest(fake, 'held', { cycleSettings: { method: 'Drain', concurrency: 1 } }, async (h) => {
      const waiting = await statusWhen(h, 'waiting for the maintenance', (s) => s.message.startsWith('waiting for NodeMaintenance'));
      expect(waiting.message).toBe('waiting for NodeMaintenance kernel-upgrade (Drain) on node held-0');
      expect(fake.nodesOf('detachNodes')).toEqual([['held-1']]); // the held node is never touched
      expect(fake.nodesOf('cordonNode').flat()).not.toContain('held-0');
      // It waits in one watch of the held node (issue 26), not by claiming again: still held, still waiting, still untouched.
      await waitFor('the held wait', async () => fake.callsOf('waitForHeldNodes').length >= 1, { timeoutMs: 15_000, intervalMs: 100 });
      await new Promise((r) => setTimeout(r, 1000));
      expect(fake.nodesOf('claimNodes').filter((n) => n.includes('held-0'))).toHaveLength(1);
      expect((await h.query(cycleStatusQuery)).message).toBe('waiting for NodeMaintenance kernel-upgrade (Drain) on node held-0');
      letGo = Date.now();
      fake.maintenanceHolds.delete('held-0'); // the maintenance completed
    });
    expect(result.phase).toBe('Successful');
    expect(fake.nodesOf('detachNodes')).toEqual([['held-1'], ['held-0']]);
    // The node's cyclingTimeout starts with its cycle, not while it was held.
    const n0 = result.nodes.find((n) => n.nodeName === 'held-0')!;
    expect(new Date(n0.startedAt!).getTime()).toBeGreaterThanOrEqual(letGo - 1000);
  }, 60_000);
});

describe('#28 a request holds the work in flight, not its fleet', () => {
  test.concurrent('#28 the selection is a cursor (a first page, then nextNodes as batches need them); replacements are told apart by the batch, not a list of every node; the end releases budget slots by holder', async () => {
    const fake = new FakeCycle('cursor', 6);
    const result = await runRequest(fake, 'cursor', { cycleSettings: { method: 'Drain', concurrency: 2 } });
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 6, nodesTotal: 6, nodesByPhase: expect.objectContaining({ Successful: 6, Pending: 0 }) });
    // The resolve returns a first page as large as a batch; the rest is read page by page, in name order, each node once.
    const first = (fake.callsOf('resolveCycle')[0]!.output as { nodes: Array<{ name: string }> }).nodes.map((n) => n.name);
    expect(first).toEqual(['cursor-0', 'cursor-1']);
    const pages = fake.callsOf('nextNodes').map((c) => ({ ...(c.input as { after?: string; limit: number }), names: (c.output as { nodes: Array<{ name: string }> }).nodes.map((n) => n.name) }));
    expect(pages.length).toBeGreaterThan(0);
    expect(Math.max(...pages.map((p) => p.limit))).toBeLessThanOrEqual(2);
    expect([...first, ...pages.flatMap((p) => p.names)]).toEqual(fake.nodes.map((n) => n.name));
    expect(fake.nodesOf('detachNodes').flat()).toEqual(fake.nodes.map((n) => n.name));
    // waitForReplacements excludes the batch and the recent replacements only: never the fleet.
    const excluded = fake.callsOf('waitForReplacements').map((c) => (c.input as { exclude: string[] }).exclude);
    const lastBatch = fake.nodesOf('detachNodes').at(-1)!;
    expect(excluded.at(-1)).toEqual(expect.arrayContaining(lastBatch));
    expect(excluded.at(-1)).not.toContain('cursor-0');
    expect(Math.max(...excluded.map((e) => e.length))).toBeLessThanOrEqual(2 + 2 * 2); // the batch, the last batches' replacements
    // The end gives back whatever budget slots the request still holds, by holder (no list of nodes).
    expect(fake.callsOf('releaseDisruption').at(-1)!.input).toEqual({ holder: fake.request('cursor').workflowId });
  });
});
