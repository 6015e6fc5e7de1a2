// Dependency locks in the drain workflow (NM-5.9–5.13, E5 b and b′) on the real workflow code with
// scripted activities: providers held while locked, dependents promoted ahead of the plan, the
// maintenance-required label, timeout policies that never free a lock, and cycles reported.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { EvictInput } from '../../activities/drain/evict.js';
import { forceDeletePodSignal } from '../../workflows/messages.js';
import { FakeDrain, fakeWhen, pod, runDrain, statusWhen } from '../support/fake-drain.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const blockedReasons = (s: { wave?: { blocked: Array<{ reason: string; pods: string[] }> } }) => s.wave?.blocked ?? [];

describe('dependency locks', () => {
  test.concurrent('NM-5.9/5.10 E5(b): a provider is held while a node lock names its component; the node is labelled maintenance-required; once the lock is removed the provider is evicted and the label goes', async () => {
    const fake = new FakeDrain('locked', [pod('l2', { provides: ['l2-agent'] }), pod('nova')]);
    fake.node.locks = { 'l2-agent': ['nova-compute'] };
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const s = await statusWhen(h, 'the provider held', (x) => blockedReasons(x).length > 0 && !fake.on('app/nova'));
        expect(blockedReasons(s)).toEqual([expect.objectContaining({ reason: 'held by dependency lock l2-agent (holders: nova-compute)', pods: ['app/l2'] })]);
        expect(fake.required).toEqual(['l2-agent']);
        await sleep(500); // l2 stays after nova is gone
        expect(fake.evictionsAsked()).toEqual(['app/nova']);
        expect(fake.on('app/l2')).toBeDefined();
        fake.node.locks = undefined; // the dependents' operator removes its lock
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 2 });
    expect(fake.evictionsAsked()).toEqual(['app/nova', 'app/l2']);
    expect(fake.required).toEqual([]);
  });

  test.concurrent('NM-5.11 E5(b′): a pod that requires the component is promoted from a later wave, evicted first with a Warning Event, and the provider only once it has left', async () => {
    const fake = new FakeDrain('promote', [pod('l2', { provides: ['l2-agent'] }), pod('nova', { order: 5, requires: ['l2-agent'] })]);
    fake.leaveAfterMs = 600; // nova terminates for a while: l2 must wait for it to be gone
    const result = await runDrain(env(), fake);
    expect(result.status.phase).toBe('Drained');
    expect(fake.evictionsAsked()).toEqual(['app/nova', 'app/l2']);
    const evicts = fake.callsOf('evictPods');
    const novaLeft = evicts[0]!.endedAt! + 600;
    expect(evicts[1]!.startedAt).toBeGreaterThanOrEqual(novaLeft - 50);
    expect(fake.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'DrainPromotedPod', message: 'Slipway drain of node promote: evicted ahead of the drain plan: requires l2-agent provided by app/l2', involved: expect.objectContaining({ name: 'nova' }) }));
    expect(result.status.warnings).toContainEqual({ pod: 'app/nova', warning: 'evicted ahead of the drain plan: requires l2-agent provided by app/l2' });
    expect(fake.callsOf('setMaintenanceRequired').map((c) => (c.input as { components: string[] }).components)).toEqual([['l2-agent'], []]);
  });

  test.concurrent('NM-5.12 policy Delete never deletes a lock-held provider; only removing the lock frees it', async () => {
    const fake = new FakeDrain('lock-delete', [pod('l2', { provides: ['l2-agent'] })]);
    fake.node.locks = { 'l2-agent': ['nova-compute'] };
    const result = await runDrain(env(), fake, {
      options: { podEvictionTimeout: { after: '1s', policy: 'Delete' } },
      during: async (h) => {
        await statusWhen(h, 'the provider held', (x) => blockedReasons(x).length > 0);
        await sleep(2500); // well past the timeout
        expect(fake.callsOf('deletePods')).toHaveLength(0);
        expect(fake.callsOf('evictPods')).toHaveLength(0);
        fake.node.locks = {};
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1, forced: [] });
    expect(fake.callsOf('deletePods')).toHaveLength(0);
  });

  test.concurrent('NM-5.12 policy Fail ends the drain over a provider held past the timeout, naming the lock, and takes its maintenance-required label back', async () => {
    const fake = new FakeDrain('lock-fail', [pod('l2', { provides: ['l2-agent'] })]);
    fake.node.locks = { 'l2-agent': ['nova-compute'] };
    const err = await runDrain(env(), fake, { options: { podEvictionTimeout: { after: '1s', policy: 'Fail' } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('PodEvictionTimeout');
    expect(cause.message).toBe('eviction refused for longer than podEvictionTimeout (1s): app/l2: held by dependency lock l2-agent (holders: nova-compute)');
    expect(fake.callsOf('evictPods')).toHaveLength(0);
    expect(fake.required).toEqual([]);
  });

  test.concurrent('circular requires: both pods held and reported with the whole cycle and an Event, nothing evicted; forceDeletePod on one frees the other', async () => {
    const fake = new FakeDrain('cycle', [pod('a', { provides: ['x'], requires: ['y'] }), pod('b', { provides: ['y'], requires: ['x'] })]);
    const cycle = 'dependency cycle: app/a requires y provided by app/b; app/b requires x provided by app/a; none can leave first: remove a slipway.dev/requires annotation or force-delete one of them';
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const s = await statusWhen(h, 'the cycle reported', (x) => blockedReasons(x).length > 0);
        expect(blockedReasons(s)).toEqual([expect.objectContaining({ reason: cycle, pods: ['app/a', 'app/b'] })]);
        await fakeWhen('the cycle Event', () => fake.events.some((e) => e.reason === 'DependencyCycle'));
        expect(fake.callsOf('evictPods')).toHaveLength(0);
        await h.signal(forceDeletePodSignal, { namespace: 'app', name: 'a', reason: 'break the cycle' });
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(fake.evictionsAsked()).toEqual(['app/b']);
    expect(result.status.forced).toEqual([expect.objectContaining({ pod: 'app/a', action: 'ForceDelete' })]);
  });

  test.concurrent('NM-5.13 a lock on a component no pod on the node provides changes nothing', async () => {
    const fake = new FakeDrain('no-provider', [pod('web')]);
    fake.node.locks = { 'l2-agent': ['nova-compute'] };
    const result = await runDrain(env(), fake);
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1 });
    expect(fake.callsOf('setMaintenanceRequired')).toHaveLength(0);
    expect((fake.callsOf('evictPods')[0]!.input as EvictInput).pods.map((p) => p.name)).toEqual(['web']);
  });
});
