// Evacuation in the drain workflow (NM-5.1–5.8) on the real workflow code with scripted activities:
// a pod with evacuators is never evicted while one is active, is reported with the evacuator's words,
// falls back to eviction (PDBs and podEvictionTimeout as for any pod) when none is left, and the
// drain leaves its Evacuations on skipPod and on cancellation.
import type { EvictInput } from '../../activities/drain/evict.js';
import type { EvacuateInput } from '../../activities/drain/evacuate.js';
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { drainTargetsSignal, skipPodSignal } from '../../workflows/messages.js';
import { FakeDrain, fakeWhen, pod, runDrain, statusWhen } from '../support/fake-drain.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget db needs 1 healthy pods and has 1 currently";
const evacuating = (s: { wave?: { evacuating?: unknown[] } }) => (s.wave?.evacuating?.length ?? 0) > 0;

describe('evacuation', () => {
  test.concurrent('NM-5.1/5.4/5.5: a pod with an evacuator gets an Evacuation, not an eviction, for as long as it is active; reported with its message; it leaves by the evacuator and the drain completes', async () => {
    const fake = new FakeDrain('evac-active', [pod('db', { evacuators: ['db-operator.test'] }), pod('web')]);
    const result = await runDrain(env(), fake, {
      options: { evacuationProgressDeadline: '45s' },
      requester: { name: 'nodemaintenance/m1', reason: 'kernel upgrade' },
      during: async (h) => {
        const s = await statusWhen(h, 'db evacuating', (x) => evacuating(x) && !fake.on('app/web'));
        expect(s.wave!.evacuating).toEqual([{ pod: 'app/db', message: 'evacuating by db-operator.test: moving' }]);
        expect(s.wave!.evicting).not.toContain('app/db');
        expect(s.message).toContain('* Pod app/db: evacuating by db-operator.test: moving');
        await sleep(1500);
        expect(fake.evictionsAsked()).toEqual(['app/web']);
        fake.pods = fake.pods.filter((p) => p.name !== 'db'); // the evacuator moved it and deleted the pod
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1 });
    expect(fake.evictionsAsked()).toEqual(['app/web']);
    const first = fake.callsOf('progressEvacuations')[0]!.input as EvacuateInput;
    expect(first).toMatchObject({ nodeName: 'evac-active', requester: 'nodemaintenance/m1', reason: 'kernel upgrade', progressDeadlineSeconds: 45 });
    expect(first.pods.map((p) => p.name)).toEqual(['db']);
    expect(fake.callsOf('deletePods')).toHaveLength(0);
  });

  test.concurrent('NM-5.2/5.3: when no evacuator is left the pod falls back to eviction, PDBs respected, and podEvictionTimeout counts from the first refusal', async () => {
    const fake = new FakeDrain('evac-fallback', [pod('db', { evacuators: ['a', 'b'] })]);
    fake.refusals.set('app/db', PDB);
    const started = Date.now();
    // Active for 1.5 s, then nobody is left: the drain must look again by `untilMs`, not wait a poll.
    fake.evacuation = (p) => (Date.now() - started < 1500 ? { uid: p.uid, state: 'evacuating', evacuator: 'a', message: 'evacuating by a', untilMs: started + 1500 } : { uid: p.uid, state: 'fallback' });
    const result = await runDrain(env(), fake, {
      options: { podEvictionTimeout: { after: '2s', policy: 'Delete' } },
      during: async (h) => {
        await statusWhen(h, 'refused by the PDB', (x) => (x.wave?.blocked.length ?? 0) > 0);
        const firstRefusal = fake.callsOf('evictPods')[0]!.startedAt;
        expect(firstRefusal - started).toBeGreaterThanOrEqual(1400);
        expect(firstRefusal - started).toBeLessThan(8000);
      },
    });
    expect(result.status.phase).toBe('Drained');
    const deleted = fake.callsOf('deletePods')[0]!;
    expect(deleted.startedAt - fake.callsOf('evictPods')[0]!.startedAt).toBeGreaterThanOrEqual(2000);
    expect(result.status.forced).toEqual([expect.objectContaining({ pod: 'app/db', action: 'DeleteAfterTimeout' })]);
    // NM-5.3: failedEvictions counts the refusals since the fallback, never going down.
    const counts = fake.callsOf('recordFailedEvictions').map((c) => (c.input as { pods: Array<{ uid: string; failedEvictions: number }> }).pods.find((p) => p.uid === 'uid-db')!.failedEvictions);
    expect(counts.length).toBeGreaterThanOrEqual(1);
    expect(counts[0]).toBe(1);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });

  test.concurrent('NM-5.4: policy Delete never deletes a pod whose evacuator is active, however long it takes', async () => {
    const fake = new FakeDrain('evac-delete', [pod('db', { evacuators: ['a'] })]);
    const result = await runDrain(env(), fake, {
      options: { podEvictionTimeout: { after: '1s', policy: 'Delete' } },
      during: async (h) => {
        await statusWhen(h, 'db evacuating', evacuating);
        await sleep(2500);
        expect(fake.callsOf('deletePods')).toHaveLength(0);
        expect(fake.callsOf('evictPods')).toHaveLength(0);
        fake.pods = [];
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 0, forced: [] });
  });

  test.concurrent('NM-5.7: skipPod beats evacuation: the drain withdraws from the Evacuation and keeps the pod', async () => {
    const fake = new FakeDrain('evac-skip', [pod('db', { evacuators: ['a'] })]);
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await statusWhen(h, 'db evacuating', evacuating);
        await h.signal(skipPodSignal, { namespace: 'app', name: 'db', reason: 'keep the primary' });
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(result.status.skipped).toContainEqual({ pod: 'app/db', reason: 'keep the primary' });
    expect(fake.callsOf('withdrawEvacuations').map((c) => c.input)).toEqual([{ requester: 'drain/evac-skip', pods: [{ namespace: 'app', name: 'db', uid: 'uid-db' }] }]);
    expect(fake.callsOf('evictPods')).toHaveLength(0);
  });

  test.concurrent('NM-5.6: a cancelled drain (the maintenance completed) leaves every Evacuation it joined', async () => {
    const fake = new FakeDrain('evac-cancel', [pod('db', { evacuators: ['a'] }), pod('cache', { evacuators: ['b'] })]);
    const err = await runDrain(env(), fake, {
      requester: { name: 'nodemaintenance/m2' },
      during: async (h) => {
        await statusWhen(h, 'both evacuating', (x) => (x.wave?.evacuating?.length ?? 0) === 2);
        await h.cancel();
      },
    }).catch((e: unknown) => e);
    expect(err).toBeDefined();
    await fakeWhen('the withdrawal', () => fake.callsOf('withdrawEvacuations').some((c) => c.endedAt !== undefined));
    const w = fake.callsOf('withdrawEvacuations')[0]!.input as { requester: string; pods: Array<{ name: string }> };
    expect(w.requester).toBe('nodemaintenance/m2');
    expect(w.pods.map((p) => p.name).sort()).toEqual(['cache', 'db']);
    expect(fake.callsOf('evictPods')).toHaveLength(0);
  });

  test.concurrent('NM-5.6 with two maintenances on the node: both join; when one completes (newer targets without it) it alone leaves, the other keeps the pod leaving', async () => {
    const fake = new FakeDrain('evac-two', [pod('db', { evacuators: ['a'] })]);
    const lanes = [{ podType: 'Default' as const, podPriority: MAX_PRIORITY }];
    const m1 = { name: 'nodemaintenance/m1', reason: 'kernel' };
    const m2 = { name: 'nodemaintenance/m2' };
    const result = await runDrain(env(), fake, {
      targets: { lanes, final: true, seq: 1, requesters: [m1, m2] },
      during: async (h) => {
        await statusWhen(h, 'db evacuating', evacuating);
        const first = fake.callsOf('progressEvacuations')[0]!.input as EvacuateInput;
        expect(first).toMatchObject({ requester: 'nodemaintenance/m1', reason: 'kernel', alsoRequesters: [m2] });
        await h.signal(drainTargetsSignal, { lanes, final: true, seq: 2, requesters: [m2] });
        await fakeWhen('m1 withdrawn', () => fake.callsOf('withdrawEvacuations').some((c) => c.endedAt !== undefined));
        fake.pods = []; // the evacuator finishes for m2
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(fake.callsOf('withdrawEvacuations').map((c) => c.input)).toEqual([{ requester: 'nodemaintenance/m1', pods: [{ namespace: 'app', name: 'db', uid: 'uid-db' }] }]);
    const last = fake.callsOf('progressEvacuations').at(-1)!.input as EvacuateInput;
    expect(last.requester).toBe('nodemaintenance/m2');
    expect(last.alsoRequesters).toBeUndefined();
    expect(fake.callsOf('evictPods')).toHaveLength(0);
  });

  test.concurrent('NM-5.8/NM-6.7: a targeted DaemonSet pod with an evacuator is evacuated; when its evacuators give up it is kept, never evicted', async () => {
    const fake = new FakeDrain('evac-daemon', [pod('agent', { podType: 'DaemonSet', evacuators: ['a'], action: 'Evict' }), pod('web')]);
    fake.evacuation = (p) => ({ uid: p.uid, state: 'fallback' });
    const result = await runDrain(env(), fake, { targets: { lanes: [{ podType: 'Default', podPriority: MAX_PRIORITY }, { podType: 'DaemonSet', podPriority: MAX_PRIORITY }], final: true, seq: 1 } });
    expect(result.status.phase).toBe('Drained');
    expect(fake.callsOf('progressEvacuations').length).toBeGreaterThanOrEqual(1);
    expect(fake.evictionsAsked()).toEqual(['app/web']);
    expect(result.status.skipped).toContainEqual({ pod: 'app/agent', reason: 'DaemonSet pod: no evacuator left; left for node shutdown' });
  });

  test.concurrent('a pod without evacuators is never handed to progressEvacuations (no new commands for ordinary drains)', async () => {
    const fake = new FakeDrain('evac-none', [pod('web')]);
    const result = await runDrain(env(), fake);
    expect(result.status.phase).toBe('Drained');
    expect(fake.callsOf('progressEvacuations')).toHaveLength(0);
    expect((fake.callsOf('evictPods')[0]!.input as EvictInput).pods.map((p) => p.name)).toEqual(['web']);
  });
});
