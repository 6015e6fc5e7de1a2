// The drain workflow's phase handlers (workflows/drain/drain.ts, PHASES), each on the real workflow
// code with scripted activities (test/support/fake-drain.ts): what each phase reads, decides and
// calls, and where it goes next.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { EvictInput } from '../../activities/drain/evict.js';
import type { WaveWaitInput } from '../../activities/drain/wave-wait.js';
import type { VolumeWaitInput } from '../../activities/drain/volumes.js';
import type { DrainSnapshot, PodVerdict } from '../../shared/drain.js';
import { FakeDrain, fakeWhen, pod, runDrain, statusWhen } from '../support/fake-drain.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const names = (f: FakeDrain) => f.calls.map((c) => c.name);
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget web needs 2 healthy pods and has 2 currently";
const HELD = 'DrainRule bad is invalid: spec.drain.order: Too big: expected int to be <=2147483647';

describe('Pending', () => {
  test.concurrent('holds while an invalid DrainRule could affect the node, touching nothing, and resumes once a rule change leaves a clean read', async () => {
    const fake = new FakeDrain('held', [pod('web')]);
    fake.heldBy = [HELD];
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const held = await statusWhen(h, 'the drain held', (s) => s.heldBy.length > 0);
        expect(held.heldBy).toEqual([HELD]);
        expect(held.phase).toBe('Pending');
        expect(held.message).toContain('Drain held: an invalid DrainRule could decide about Pods on Node held');
        await fakeWhen('a wait for rule changes', () => fake.callsOf('waitForDrainRuleChange').length === 1);
        // A change that leaves the rule invalid: still held, still nothing touched.
        fake.rulesChanged();
        await fakeWhen('a second wait for rule changes', () => fake.callsOf('waitForDrainRuleChange').length === 2);
        expect(names(fake)).toEqual(['classifyPods', 'waitForDrainRuleChange', 'classifyPods', 'waitForDrainRuleChange']);
        fake.rulesChanged([]); // fixed
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', heldBy: [], evicted: 1 });
    expect(names(fake).slice(4, 6)).toEqual(['classifyPods', 'cordonNode']);
  });

  test.concurrent('invalid drain options fail it with InvalidDrainInput before anything is cordoned', async () => {
    const fake = new FakeDrain('bad-options', [pod('web')]);
    const err = await runDrain(env(), fake, { options: { evictionConcurrency: 0 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('InvalidDrainInput');
    expect(cause.message).toContain('drain options evictionConcurrency');
    expect(names(fake)).toEqual(['classifyPods']);
  });

  test.concurrent('a missing node is Drained "not found" and nothing is touched', async () => {
    const fake = new FakeDrain('gone', [], { exists: false });
    const result = await runDrain(env(), fake);
    expect(result.status).toMatchObject({ phase: 'Drained', nodeGone: 'before', evicted: 0, message: 'Node gone not found; nothing to drain' });
    expect(names(fake)).toEqual(['classifyPods']);
  });
});

describe('Cordoning', () => {
  test.concurrent('cordons an uncordoned node once, before the first eviction', async () => {
    const fake = new FakeDrain('cordon', [pod('web'), pod('api', { order: 1 })]);
    await runDrain(env(), fake);
    expect(fake.callsOf('cordonNode')).toHaveLength(1);
    expect(names(fake).indexOf('cordonNode')).toBeLessThan(names(fake).indexOf('evictPods'));
    expect(fake.node.cordoned).toBe(true);
  });

  test.concurrent('skips the patch when the node is already cordoned (e.g. by a cycle)', async () => {
    const fake = new FakeDrain('cordoned', [pod('web')], { cordoned: true });
    const result = await runDrain(env(), fake);
    expect(result.status.phase).toBe('Drained');
    expect(fake.callsOf('cordonNode')).toHaveLength(0);
  });
});

describe('Draining', () => {
  test.concurrent('goes on to WaitingForVolumeDetach only after a fresh read shows nothing left: a pod that arrived meanwhile is evicted first', async () => {
    const fake = new FakeDrain('fresh', [pod('web')]);
    fake.leaveAfterMs = 100;
    let arrived = false;
    fake.recreate = () => (arrived ? undefined : ((arrived = true), pod('late')));
    const result = await runDrain(env(), fake);
    expect(fake.evictionsAsked()).toEqual(['app/web', 'app/late']);
    expect(result.status.evicted).toBe(2);
    const i = names(fake).indexOf('waitForVolumeDetach');
    expect(i).toBeGreaterThan(names(fake).lastIndexOf('evictPods'));
    // A classify's own read, never a wave wait's watched view (issue 11 lets those start a pass only).
    const before = fake.calls[i - 1]!;
    expect(before.name).toBe('classifyPods');
    expect((before.output as DrainSnapshot).pods).toEqual([]);
  });

  test.concurrent('evicts wave by wave: a higher order only once every pod of the lower orders has left the node', async () => {
    const fake = new FakeDrain('waves', [pod('first-1', { order: -10 }), pod('first-2', { order: -10 }), pod('middle', { order: 0 }), pod('last', { order: 10 })]);
    fake.leaveAfterMs = 150;
    const orderOf = new Map(fake.pods.map((p) => [`${p.namespace}/${p.name}`, p.order]));
    const result = await runDrain(env(), fake);
    const waves = fake.callsOf('evictPods').map((c) => ({ orders: (c.input as EvictInput).pods.map((p) => orderOf.get(`${p.namespace}/${p.name}`)!), onNode: c.onNode }));
    expect(waves.map((w) => [...new Set(w.orders)])).toEqual([[-10], [0], [10]]);
    for (const w of waves) expect(w.onNode.filter((k) => orderOf.get(k)! < w.orders[0]!)).toEqual([]);
    expect(result.status).toMatchObject({ phase: 'Drained', completedWaves: [-10, 0, 10], evicted: 4 });
    // Issue 11: each wave wait ends with the next pass's look, so the only classifies are the first
    // read and the one the drain finishes on.
    expect(fake.callsOf('classifyPods')).toHaveLength(2);
    expect(fake.looksInWaits).toBe(3);
    expect(names(fake).slice(-2)).toEqual(['classifyPods', 'waitForVolumeDetach']);
  });

  test.concurrent('waits for a WaitCompleted pod without evicting it, and starts the next wave only once it has finished', async () => {
    const job = pod('job', { action: 'WaitCompleted' });
    const fake = new FakeDrain('completion', [job, pod('web', { order: 1 })]);
    await runDrain(env(), fake, {
      during: async (h) => {
        const s = await statusWhen(h, 'the job waited for', (x) => (x.wave?.waitingCompletion ?? []).includes('app/job'));
        expect(s.later).toEqual([{ order: 1, pods: ['app/web'] }]);
        await sleep(300);
        expect(fake.evictionsAsked()).toEqual([]);
        // The job finishes: a finished pod is classified Delete (removed, never evicted).
        Object.assign(job, { phase: 'Succeeded', action: 'Delete' });
      },
    });
    expect(fake.evictionsAsked()).toEqual(['app/web']);
    const deleted = fake.callsOf('deletePods');
    expect(deleted.map((c) => (c.input as EvictInput).pods.map((p) => p.name))).toEqual([['job']]);
    expect(deleted[0]!.startedAt).toBeLessThan(fake.callsOf('evictPods')[0]!.startedAt);
  });

  test.concurrent('deletes finished pods with their own grace period instead of evicting them', async () => {
    const fake = new FakeDrain('finished', [pod('done', { action: 'Delete', phase: 'Succeeded' })]);
    const result = await runDrain(env(), fake);
    expect(result.status.phase).toBe('Drained');
    expect(fake.evictionsAsked()).toEqual([]);
    expect(fake.callsOf('deletePods').map((c) => c.input)).toEqual([{ nodeName: 'finished', pods: [{ namespace: 'app', name: 'done', uid: 'uid-done' }] }]);
  });

  test.concurrent('a node uncordoned mid-drain is cordoned again, with a warning', async () => {
    const fake = new FakeDrain('uncordoned', [pod('web')]);
    fake.refusals.set('app/web', PDB);
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', (s) => (s.wave?.blocked.length ?? 0) > 0);
        fake.node.cordoned = false; // kubectl uncordon
        await fakeWhen('a second cordon', () => fake.callsOf('cordonNode').length === 2);
        fake.refusals.clear();
      },
    });
    expect(result.status.warnings).toContainEqual({ pod: '', warning: 'node was uncordoned during the drain; cordoned again' });
    expect(result.status.evicted).toBe(1);
  });

  test.concurrent('a node deleted mid-drain ends it: Drained, "deleted during the drain"', async () => {
    const fake = new FakeDrain('deleted', [pod('web')]);
    fake.refusals.set('app/web', PDB);
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', (s) => (s.wave?.blocked.length ?? 0) > 0);
        fake.node.exists = false;
        fake.pods = [];
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', nodeGone: 'during' });
    expect(result.status.message).toContain('(Node deleted was deleted during the drain)');
    expect(fake.callsOf('waitForVolumeDetach')).toHaveLength(0);
  });

  test.concurrent('a DrainRule that turns invalid mid-drain holds it: nothing more is evicted until the rule changes', async () => {
    const fake = new FakeDrain('held-mid', [pod('web'), pod('api', { order: 1 })]);
    fake.refusals.set('app/web', PDB);
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the drain blocked', (s) => (s.wave?.blocked.length ?? 0) > 0);
        fake.rulesChanged([HELD]);
        const held = await statusWhen(h, 'the drain held', (s) => s.heldBy.length > 0);
        expect(held.phase).toBe('Draining');
        fake.refusals.clear(); // the PDB would now allow it, but the drain is held
        await sleep(400);
        expect(fake.on('app/web')?.terminating).toBe(false);
        expect(fake.evictionsAsked()).toEqual(['app/web']);
        fake.rulesChanged([]);
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', heldBy: [], evicted: 2 });
    // The refusal was retried by the next wave wait, after the hold, not before.
    const retried = fake.callsOf('waitForWave').find((c) => (c.output as { evicted?: Array<{ name: string }> } | undefined)?.evicted?.some((e) => e.name === 'web'));
    expect(retried!.startedAt).toBeGreaterThan(fake.callsOf('waitForDrainRuleChange')[0]!.endedAt!);
    expect(fake.evictionsAsked()).toEqual(['app/web', 'app/api']);
  });

  test.concurrent('a DrainRule that turns invalid between the read and the wave wait still holds the drain (the wait starts from the rules the read saw)', async () => {
    const fake = new FakeDrain('held-race', [pod('web'), pod('api', { order: 1 })]);
    fake.refusals.set('app/web', PDB);
    fake.afterClassify = (n) => n === 1 && fake.rulesChanged([HELD]); // after the first read, before any wait
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const held = await statusWhen(h, 'the drain held', (s) => s.heldBy.length > 0);
        expect(held.phase).toBe('Draining');
        expect(fake.evictionsAsked()).toEqual(['app/web']);
        fake.refusals.clear();
        fake.rulesChanged([]);
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', heldBy: [], evicted: 2 });
  });

  test.concurrent('a DrainRule fixed between the read and the hold resumes the drain at once, not after the hold window', async () => {
    const fake = new FakeDrain('unheld-race', [pod('web')]);
    fake.heldBy = [HELD];
    fake.afterClassify = (n) => n === 1 && fake.rulesChanged([]); // fixed before the hold's wait starts
    const started = Date.now();
    const result = await runDrain(env(), fake);
    expect(result.status).toMatchObject({ phase: 'Drained', heldBy: [], evicted: 1 });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(fake.callsOf('waitForDrainRuleChange')[0]!.output).toBe(true);
  });

  test.concurrent('pods that come back are evicted at most 3 more times, then left on the node, named in status.returning, and the drain ends', async () => {
    let n = 0;
    const sticky = (): PodVerdict => pod(`sticky-${n++}`, { controller: 'ReplicaSet app/sticky', toleratesUnschedulable: true, claims: ['app/sticky-data'] });
    const fake = new FakeDrain('returns', [sticky(), pod('web')]);
    fake.recreate = (left) => (left.controller === 'ReplicaSet app/sticky' ? sticky() : undefined);
    fake.attached = ['app/sticky-data']; // the returning pod's volume: not waited for
    const result = await runDrain(env(), fake);
    expect(fake.evictionsAsked().filter((k) => k.startsWith('app/sticky'))).toEqual(['app/sticky-0', 'app/sticky-1', 'app/sticky-2', 'app/sticky-3']);
    expect(result.status.phase).toBe('Drained');
    expect(result.status.returning).toEqual([
      // #24.3: 4 evictions of the ReplicaSet's pods in this drain (the first and 3 returns), not 3.
      { pod: 'app/sticky-4', reason: 'returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain); left on the node' },
    ]);
    expect(result.status.message).toContain('1 Pod left on the Node');
    expect(fake.on('app/sticky-4')).toBeDefined();
    // Pauses between an arrival's evictions: 2 s after the 1st, 4 s after the 2nd.
    const at = (k: string) => fake.callsOf('evictPods').find((c) => (c.input as EvictInput).pods.some((p) => `${p.namespace}/${p.name}` === k))!.startedAt;
    expect(at('app/sticky-2') - at('app/sticky-1')).toBeGreaterThanOrEqual(1900);
    expect(at('app/sticky-3') - at('app/sticky-2')).toBeGreaterThanOrEqual(3900);
    expect((fake.callsOf('waitForVolumeDetach')[0]!.input as VolumeWaitInput).ignoredClaims).toEqual(['app/sticky-data']);
    expect(result.status.volumes).toMatchObject({ timedOut: false });
  }, 30_000);
});

describe('Draining on a node whose kubelet dies', () => {
  test.concurrent('the wave wait ends when the node turns unreachable, and the pods stuck terminating there are left', async () => {
    const fake = new FakeDrain('dies-draining', [pod('db')]);
    fake.leaveAfterMs = 3_600_000; // evicted, it never leaves: no kubelet will confirm it
    const started = Date.now();
    const result = await runDrain(env(), fake, {
      during: async () => {
        await fakeWhen('a wave wait for the evicted pod', () => fake.callsOf('waitForWave').length === 1);
        expect((fake.callsOf('waitForWave')[0]!.input as WaveWaitInput).nodeUnreachable).toBe(false);
        // The kubelet dies; classify now skips the pod (terminating there for longer than 5 s).
        fake.node.unreachable = true;
        Object.assign(fake.on('app/db')!, { action: 'Skip', reason: 'terminating on an unreachable node' });
      },
    });
    expect(Date.now() - started).toBeLessThan(20_000); // not the wave wait's 5-minute window
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1, volumes: { message: 'not waited for: node dies-draining is unreachable' } });
    expect(result.status.skipped.map((x) => x.reason)).toEqual(['terminating on an unreachable node']);
  });
});

describe('WaitingForVolumeDetach', () => {
  test.concurrent('waits until the volumes detach, ignoring those of skipped pods', async () => {
    const fake = new FakeDrain('volumes', [pod('db', { claims: ['app/data-db'] }), pod('keep', { action: 'Skip', reason: 'DrainRule keep', claims: ['app/data-keep'] })]);
    fake.attached = ['app/data-db', 'app/data-keep'];
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const s = await statusWhen(h, 'the volume wait', (x) => x.phase === 'WaitingForVolumeDetach' && x.volumes !== undefined);
        expect(s.message).toContain('app/data-db');
        expect(s.message).not.toContain('app/data-keep');
        await sleep(200);
        expect((await h.describe()).status.name).toBe('RUNNING');
        fake.attached = ['app/data-keep'];
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', volumes: { timedOut: false } });
    expect(fake.callsOf('waitForVolumeDetach').every((c) => (c.input as VolumeWaitInput).ignoredClaims.join() === 'app/data-keep')).toBe(true);
  });

  test.concurrent('volumeDetachTimeout: carries on when volumes stay attached, and says so', async () => {
    const fake = new FakeDrain('volume-timeout', [pod('db', { claims: ['app/data-db'] })]);
    fake.attached = ['app/data-db'];
    const started = Date.now();
    const result = await runDrain(env(), fake, { options: { volumeDetachTimeout: '1s' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(result.status.phase).toBe('Drained');
    expect(result.status.volumes).toEqual({ message: expect.stringContaining('(volumeDetachTimeout reached; continuing)'), timedOut: true });
  });

  test.concurrent('a node that turns unreachable during the volume wait: the wait ends at once, Drained, saying why', async () => {
    const fake = new FakeDrain('dies-detaching', [pod('db', { claims: ['app/data-db'] })]);
    fake.attached = ['app/data-db'];
    const started = Date.now();
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'the volume wait', (x) => x.phase === 'WaitingForVolumeDetach' && x.volumes !== undefined);
        fake.node.unreachable = true; // the kubelet died: nothing will unmount the volume
      },
    });
    expect(Date.now() - started).toBeLessThan(10_000); // not the 15 s window, nor a timeout
    expect(result.status.phase).toBe('Drained');
    expect(result.status.volumes).toEqual({ message: 'not waited for: node dies-detaching is unreachable', timedOut: false });
  });

  test.concurrent('skips the volume wait on an unreachable node, and evicts with a 1 s grace period there', async () => {
    const fake = new FakeDrain('unreachable', [pod('db', { claims: ['app/data-db'] })], { unreachable: true });
    fake.attached = ['app/data-db'];
    const result = await runDrain(env(), fake);
    expect(result.status.phase).toBe('Drained');
    expect(fake.callsOf('waitForVolumeDetach')).toHaveLength(0);
    expect((fake.callsOf('evictPods')[0]!.input as EvictInput).gracePeriodSeconds).toBe(1);
    expect(result.status.volumes).toEqual({ message: 'not waited for: node unreachable is unreachable', timedOut: false });
  });
});
