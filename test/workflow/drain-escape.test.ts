// The drain's escape hatches, on the real workflow code with scripted activities: the
// podEvictionTimeout policies for an eviction a PDB keeps refusing, and the operator's signals.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { DeleteInput } from '../../activities/drain/evict.js';
import type { WaveWaitInput } from '../../activities/drain/wave-wait.js';
import type { EvictInput } from '../../activities/drain/evict.js';
import { drainDecisionsQuery, forceDeletePodSignal, retryNowSignal, skipPodSignal } from '../../workflows/messages.js';
import { FakeDrain, fakeWhen, pod, runDrain, statusWhen } from '../support/fake-drain.js';
import type { Call } from '../support/scripted.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget web needs 2 healthy pods and has 2 currently";
const blocked = (name: string) => {
  const fake = new FakeDrain(name, [pod('web'), pod('api')]);
  fake.refusals.set('app/web', PDB);
  return fake;
};
/** The wave wait running now (the one a signal should cut short). */
const waiting = async (fake: FakeDrain): Promise<Call> => {
  await fakeWhen('a wave wait running', () => fake.callsOf('waitForWave').some((c) => c.endedAt === undefined));
  return fake.callsOf('waitForWave').find((c) => c.endedAt === undefined)!;
};
/** Whether it ended by the workflow's cancel (which reaches the activity with its next heartbeat). */
const cancelled = async (wait: Call) => {
  await fakeWhen('the wave wait to end', () => wait.endedAt !== undefined);
  return wait.cancelled;
};
const isBlocked = (s: { wave?: { blocked: unknown[] } }) => (s.wave?.blocked.length ?? 0) > 0;

describe('podEvictionTimeout', () => {
  test.concurrent('Wait (the default) keeps retrying past the timeout and reports the PDB; nothing is deleted', async () => {
    const fake = blocked('policy-wait');
    const result = await runDrain(env(), fake, {
      options: { podEvictionTimeout: { after: '1s', policy: 'Wait' } },
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        await sleep(1500);
        const s = await statusWhen(h, 'the drain blocked', isBlocked);
        expect(s.phase).toBe('Draining');
        expect(s.wave!.blocked).toEqual([{ reason: PDB, pdbs: ['web'], pods: ['app/web'] }]);
        expect(fake.callsOf('deletePods')).toHaveLength(0);
        fake.refusals.clear(); // capacity returns
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 2, forced: [] });
    expect(fake.callsOf('deletePods')).toHaveLength(0);
  });

  test.concurrent('Fail fails the drain after the timeout, naming the pod and the refusal; nothing is deleted', async () => {
    const fake = blocked('policy-fail');
    const started = Date.now();
    const err = await runDrain(env(), fake, { options: { podEvictionTimeout: { after: '1s', policy: 'Fail' } } }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('PodEvictionTimeout');
    expect(cause.message).toBe(`eviction refused for longer than podEvictionTimeout (1s): app/web: ${PDB}`);
    expect(fake.callsOf('deletePods')).toHaveLength(0);
    expect(fake.on('app/web')?.terminating).toBe(false);
  });

  test.concurrent('Delete deletes the refused pod with its own grace period after the timeout, and records it in status and as a Warning Event', async () => {
    const fake = blocked('policy-delete');
    const result = await runDrain(env(), fake, { options: { podEvictionTimeout: { after: '1s', policy: 'Delete' } } });
    const deletes = fake.callsOf('deletePods');
    expect(deletes.map((c) => c.input)).toEqual([{ nodeName: 'policy-delete', pods: [{ namespace: 'app', name: 'web', uid: 'uid-web' }] }]);
    expect((deletes[0]!.input as DeleteInput).gracePeriodSeconds).toBeUndefined();
    expect(deletes[0]!.startedAt - fake.callsOf('evictPods')[0]!.startedAt).toBeGreaterThanOrEqual(1000);
    expect(result.status.forced).toEqual([{ pod: 'app/web', action: 'DeleteAfterTimeout', by: 'policy', at: expect.any(String), reason: `eviction refused for longer than 1s: ${PDB}` }]);
    expect(fake.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'DrainDeletedPodAfterTimeout', involved: expect.objectContaining({ kind: 'Pod', namespace: 'app', name: 'web', uid: 'uid-web' }) })]);
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1 });
  });
});

describe('operator signals', () => {
  test.concurrent('skipPod leaves the pod on the node, ends the wave wait at once, records an Event, and the drain ends without it', async () => {
    const fake = blocked('skip');
    let wait: Call | undefined;
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        wait = await waiting(fake);
        await h.signal(skipPodSignal, { namespace: 'app', name: 'web', reason: 'moved by hand' });
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1 });
    expect(result.status.forced).toEqual([{ pod: 'app/web', action: 'Skip', by: 'signal', at: expect.any(String), reason: 'moved by hand' }]);
    expect(fake.events.map((e) => e.reason)).toEqual(['DrainSkippedPod']);
    expect(fake.on('app/web')?.terminating).toBe(false);
    expect(await cancelled(wait!)).toBe(true);
    expect(fake.evictionsAsked().filter((k) => k === 'app/web')).toHaveLength(1);
  });

  test.concurrent('#24.3 a skip and a force-delete end as "1 force-deleted" and "1 Pod skipped", the skipped pod named, never "2 forced"', async () => {
    const fake = new FakeDrain('skip-and-force', [pod('web'), pod('db'), pod('api')]);
    fake.refusals.set('app/web', PDB);
    fake.refusals.set('app/db', PDB);
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'both blocked', (s) => (s.wave?.blocked.flatMap((g) => g.pods).length ?? 0) === 2);
        await h.signal(skipPodSignal, { namespace: 'app', name: 'web', reason: 'moved by hand' });
        await h.signal(forceDeletePodSignal, { namespace: 'app', name: 'db', reason: 'disk gone' });
      },
    });
    expect(result.status.forced.map((f) => f.action).sort()).toEqual(['ForceDelete', 'Skip']);
    expect(result.status.message.split('\n')).toEqual([
      'Drain completed: 1 Pod evicted, 1 force-deleted; 1 Pod skipped (1 moved by hand)',
      '* Pod app/web: skipped (moved by hand), left on the node',
    ]);
  });

  test.concurrent('who asked for a forced action (requestedBy) is kept with it in status and named in the Event on the pod', async () => {
    const fake = blocked('force-who');
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        await h.signal(forceDeletePodSignal, { namespace: 'app', name: 'web', reason: 'disk gone', requestedBy: 'alice@ops-box' });
      },
    });
    expect(result.status.forced).toEqual([{ pod: 'app/web', action: 'ForceDelete', by: 'signal', requestedBy: 'alice@ops-box', at: expect.any(String), reason: 'disk gone' }]);
    expect(fake.events.map((e) => e.message)).toEqual(['Slipway drain of node force-who: ForceDelete by signal from alice@ops-box: disk gone']);
  });

  test.concurrent('forceDeletePod deletes the pod at once with grace 0, bypassing its PDB, and records an Event', async () => {
    const fake = blocked('force');
    let wait: Call | undefined;
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        wait = await waiting(fake);
        await h.signal(forceDeletePodSignal, { namespace: 'app', name: 'web' });
      },
    });
    expect(fake.callsOf('deletePods').map((c) => c.input)).toEqual([{ nodeName: 'force', pods: [{ namespace: 'app', name: 'web', uid: 'uid-web' }], gracePeriodSeconds: 0, forced: true }]);
    expect(result.status.forced).toEqual([{ pod: 'app/web', action: 'ForceDelete', by: 'signal', at: expect.any(String), reason: 'force-deleted by operator' }]);
    expect(fake.events.map((e) => e.reason)).toEqual(['DrainForceDeletedPod']);
    expect(await cancelled(wait!)).toBe(true);
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1 });
  });

  test.concurrent('retryNow cancels the wave wait and starts the next one at once, which retries the refused eviction', async () => {
    const fake = blocked('retry');
    let signalled = 0;
    let wait: Call | undefined;
    await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        wait = await waiting(fake);
        signalled = Date.now();
        await h.signal(retryNowSignal);
        await fakeWhen('the next wave wait', () => fake.callsOf('waitForWave').at(-1) !== wait);
        fake.refusals.clear();
      },
    });
    const waits = fake.callsOf('waitForWave');
    const second = waits[waits.indexOf(wait!) + 1];
    expect(await cancelled(wait!)).toBe(true);
    expect(second!.startedAt - signalled).toBeLessThan(1000);
    expect((second!.input as WaveWaitInput).refused.map((p) => p.name)).toEqual(['web']);
    // Refusals are retried inside the wait, never by a second evictPods call.
    expect(fake.evictionsAsked()).toEqual(['app/api', 'app/web']);
  });

  test.concurrent('a signal naming a pod that is not on the node changes nothing', async () => {
    const fake = blocked('stray');
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        const wait = await waiting(fake);
        await h.signal(forceDeletePodSignal, { namespace: 'app', name: 'nope' });
        await h.signal(skipPodSignal, { namespace: 'other', name: 'web' });
        expect(await cancelled(wait)).toBe(true);
        await fakeWhen('the next wave wait', () => fake.callsOf('waitForWave').at(-1) !== wait);
        fake.refusals.clear();
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 2, forced: [] });
    expect(fake.callsOf('deletePods')).toHaveLength(0);
    expect(fake.events).toEqual([]);
  });
});

// A signal cancels the running waitForWave, which retries refused evictions; the cancel reaches the
// activity only with the answer to its next heartbeat, and the worker throttles heartbeats to
// 0.8 × heartbeatTimeout (12 s for the drain's waits). Until then the cancelled wait goes on
// retrying, and an eviction it makes is real. These tests' worker throttles as production does.
describe('a signal while the cancelled wave wait has not heard of the cancel yet', () => {
  test.concurrent('the status tells the truth about a pod that wait evicted after a skipPod: counted as evicted, not reported as skipped', async () => {
    const fake = blocked('skip-race');
    const result = await runDrain(env(), fake, {
      worker: { fastCancellation: false },
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', isBlocked);
        await fakeWhen('a wave wait retrying web', () => fake.callsOf('waitForWave').some((c) => c.endedAt === undefined && (c.input as WaveWaitInput).refused.some((p) => p.name === 'web')));
        await h.signal(skipPodSignal, { namespace: 'app', name: 'web', reason: 'leave it' });
        await fakeWhen('the skip recorded', () => fake.events.length === 1);
        fake.refusals.clear(); // the PDB allows one more disruption a moment later
        await sleep(500);
      },
    });
    const webEvicted = fake.on('app/web') === undefined;
    const skipped = result.status.forced.some((f) => f.pod === 'app/web' && f.action === 'Skip');
    // Every pod the drain's activities evicted is in the count, and a pod is reported skipped (left
    // on the node) only if it is still there.
    expect({ evicted: result.status.evicted, reportedSkipped: skipped }).toEqual({ evicted: webEvicted ? 2 : 1, reportedSkipped: !webEvicted });
  });
});

describe('#24.1 operator decisions that race the drain', () => {
  /** A drain whose first eviction batch waits for `release` (an eviction in flight while signals arrive). */
  class HeldBatch extends FakeDrain {
    release!: () => void;
    held = false;
    private readonly gate = new Promise<void>((r) => (this.release = r));
    override activities() {
      const a = super.activities();
      return {
        ...a,
        evictPods: async (input: EvictInput) => {
          this.held = true;
          await this.gate;
          return a.evictPods(input);
        },
      };
    }
  }

  test.concurrent('#24.1 a skipPod after a forceDeletePod for the same pod wins: the drain reports it and the pod is never deleted', async () => {
    const fake = new HeldBatch('force-then-skip', [pod('web'), pod('api')]);
    fake.refusals.set('app/web', PDB);
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await fakeWhen('the eviction batch out', () => fake.held);
        await h.signal(forceDeletePodSignal, { namespace: 'app', name: 'web', reason: 'disk gone' });
        expect(await h.query(drainDecisionsQuery)).toEqual({ 'app/web': 'ForceDelete' });
        await h.signal(skipPodSignal, { namespace: 'app', name: 'web', reason: 'keep it after all' });
        expect(await h.query(drainDecisionsQuery)).toEqual({ 'app/web': 'Skip' });
        fake.release();
      },
    });
    expect(result.status.forced).toEqual([expect.objectContaining({ pod: 'app/web', action: 'Skip', reason: 'keep it after all' })]);
    expect(fake.callsOf('deletePods')).toHaveLength(0);
    expect(fake.on('app/web')?.terminating).toBe(false);
  });
});
