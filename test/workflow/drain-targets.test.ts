// The drain's targets mode (a NodeMaintenance's node coordinator drives it): only pods matching a
// drain-target lane leave, newer targets arrive by signal, and the drain reports finished, seq and
// counts to the workflow it reports to. Real workflow code, scripted activities (fake-drain.ts).
// The reports are read from the receiver's history: it is a workflow on a task queue no worker
// polls, so it stays open and records every signal it is sent.
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ClassifyInput } from '../../activities/drain/snapshot.js';
import type { VolumeWaitInput } from '../../activities/drain/volumes.js';
import { MAX_PRIORITY, type Lane } from '../../api/drain-plan.js';
import { drainStatusQuery, drainTargetsSignal, type DrainReport, type DrainTargets } from '../../workflows/messages.js';
import { FakeDrain, fakeWhen, pod, receiver, reportWhen, runDrain, statusWhen } from '../support/fake-drain.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const D = (podPriority: number): Lane => ({ podType: 'Default', podPriority });
const DS = (podPriority: number): Lane => ({ podType: 'DaemonSet', podPriority });
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget web needs 2 healthy pods and has 2 currently";

/**
 * What woke the workflow task in which the drain sent the first report matching `pred`: the history
 * events between the previous task's completion and the one that sent it (e.g. activityTaskCompleted,
 * timerFired for a report held back to settle).
 */
async function triggersOfReport(h: WorkflowHandle, pred: (r: DrainReport) => boolean): Promise<string[]> {
  const events = (await h.fetchHistory()).events!;
  const kind = (e: (typeof events)[number]) => Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k])!.replace('EventAttributes', '');
  const i = events.findIndex((e) => {
    const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return a?.signalName === 'drainProgress' && pred(defaultPayloadConverter.fromPayload<DrainReport>(a.input!.payloads![0]!));
  });
  expect(i).toBeGreaterThan(0);
  const completed = events.slice(0, i).map(kind).lastIndexOf('workflowTaskCompleted');
  const before = events.slice(0, completed).map(kind).lastIndexOf('workflowTaskCompleted');
  return events.slice(before + 1, completed).map(kind);
}

describe('targets mode', () => {
  test.concurrent('evicts only targeted pods, reports finished at non-final targets, takes the next lanes on a signal, and at final targets waits for volumes and ends Drained', async () => {
    const fake = new FakeDrain('targets', [
      pod('low'),
      pod('high', { claims: ['app/data-high'] }),
      pod('agent', { podType: 'DaemonSet', controller: 'DaemonSet app/agent' }),
      pod('keep', { action: 'Skip', reason: 'label slipway.dev/drain=skip', claims: ['app/data-keep'] }),
    ]);
    fake.priorities.set('app/low', 100);
    fake.priorities.set('app/high', 5000);
    fake.attached = ['app/data-high', 'app/data-keep'];
    const r = await receiver(env().client, 'receiver/targets');
    const first: DrainTargets = { lanes: [D(1000)], final: false, seq: 1 };
    const result = await runDrain(env(), fake, {
      workflowId: 'nm-node/targets/drain',
      targets: first,
      reportTo: r.id,
      during: async (h) => {
        const done1 = await reportWhen(r, 'finished at targets #1', (x) => x.targetsSeq === 1 && x.finished === true);
        expect(fake.evictionsAsked()).toEqual(['app/low']);
        // high (untargeted) and agent (a DaemonSet pod no lane reaches) are pending; keep is Skip.
        expect(done1.counts).toEqual({ podsPendingEvictionRequest: 2, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 });
        // Prompt: the finished report went out in the workflow task that saw it, not after a 2 s settle timer.
        expect(await triggersOfReport(h, (x) => x.targetsSeq === 1 && x.finished === true)).not.toContain('timerFired');
        const s = await statusWhen(h, 'finished at #1', (x) => x.finished === true);
        expect(s).toMatchObject({ phase: 'Draining', targets: first });
        expect(s.message).toBe('Drain targets reached (Default ≤ 1000); waiting for the next targets');
        await sleep(400);
        expect(fake.evictionsAsked()).toEqual(['app/low']);
        expect(fake.on('app/high')?.terminating).toBe(false);

        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY), DS(MAX_PRIORITY)], final: true, seq: 2 });
        const v = await statusWhen(h, 'the volume wait at final targets', (x) => x.phase === 'WaitingForVolumeDetach' && x.volumes !== undefined);
        expect(fake.evictionsAsked()).toEqual(['app/low', 'app/high']);
        // Finished at the final targets, not yet drained: the volume of high is still attached.
        expect(v.finished).toBe(true);
        await reportWhen(r, 'finished at #2', (x) => x.targetsSeq === 2 && x.finished === true);
        expect((await r.reports()).some((x) => x.drained)).toBe(false);
        fake.attached = ['app/data-keep']; // high's volume detaches; keep's stays (a Skip pod's)
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', finished: true, evicted: 2 });
    expect(result.status.skipped).toEqual([
      { pod: 'app/agent', reason: 'DaemonSet pod without evacuator: left for node shutdown' },
      { pod: 'app/keep', reason: 'label slipway.dev/drain=skip' },
    ]);
    expect(fake.on('app/agent')?.terminating).toBe(false);
    expect(fake.callsOf('waitForVolumeDetach').every((c) => (c.input as VolumeWaitInput).ignoredClaims.includes('app/data-keep'))).toBe(true);
    // Every classify asked with the lanes in effect; the last report says finished at the final seq.
    expect(fake.callsOf('classifyPods').map((c) => (c.input as ClassifyInput).targets?.length)).toContain(2);
    const last = (await r.reports()).at(-1)!;
    expect(last).toMatchObject({ targetsSeq: 2, finished: true, drained: true, volumeTimedOut: false, counts: { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 1 } });
    await r.close();
  });

  test.concurrent('a targeted pod that arrives while finished at non-final targets is evicted; an untargeted one is left alone', async () => {
    const fake = new FakeDrain('targets-late', [pod('low')]);
    const r = await receiver(env().client, 'receiver/targets-late');
    await runDrain(env(), fake, {
      workflowId: 'nm-node/targets-late/drain',
      targets: { lanes: [D(1000)], final: false, seq: 1 },
      reportTo: r.id,
      during: async (h) => {
        await statusWhen(h, 'finished at #1', (x) => x.finished === true);
        fake.priorities.set('app/big', 1_000_000);
        fake.pods.push(pod('big'), pod('late'));
        await fakeWhen('the newcomer evicted', () => fake.evictionsAsked().includes('app/late'));
        await statusWhen(h, 'finished again', (x) => x.finished === true && x.counts?.podsPendingEvictionRequest === 1);
        expect(fake.evictionsAsked()).toEqual(['app/low', 'app/late']);
        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY)], final: true, seq: 2 });
      },
    });
    expect(fake.evictionsAsked()).toEqual(['app/low', 'app/late', 'app/big']);
    await r.close();
  });

  test.concurrent('counts a refused eviction as active and blocked, and is not finished while it is refused', async () => {
    const fake = new FakeDrain('targets-pdb', [pod('web'), pod('other')]);
    fake.priorities.set('app/other', 5000);
    fake.refusals.set('app/web', PDB);
    const r = await receiver(env().client, 'receiver/targets-pdb');
    await runDrain(env(), fake, {
      workflowId: 'nm-node/targets-pdb/drain',
      targets: { lanes: [D(1000)], final: false, seq: 1 },
      reportTo: r.id,
      during: async (h) => {
        const blocked = await reportWhen(r, 'a report of the blocked pod', (x) => x.counts?.podsBlocked === 1);
        expect(blocked).toMatchObject({ targetsSeq: 1, finished: false, counts: { podsPendingEvictionRequest: 1, activeEvictionRequests: 1, podsBlocked: 1, podsKept: 0 } });
        // A stale seq changes nothing.
        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY)], final: true, seq: 1 });
        await sleep(300);
        expect(fake.evictionsAsked()).toEqual(['app/web']);
        fake.refusals.clear();
        await reportWhen(r, 'finished at #1', (x) => x.targetsSeq === 1 && x.finished === true);
        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY)], final: true, seq: 2 });
      },
    });
    expect(fake.evictionsAsked()).toEqual(['app/web', 'app/other']);
    await r.close();
  });

  test.concurrent('DrainRule orders are sub-waves inside the targets: b (order 100) only after a (order 0) has left; an untargeted pod of a lower order holds nothing (NM-7.3)', async () => {
    const fake = new FakeDrain('targets-order', [pod('a', { order: 0 }), pod('b', { order: 100 }), pod('early', { order: -10 })]);
    fake.priorities.set('app/early', 5000);
    fake.leaveAfterMs = 150;
    const r = await receiver(env().client, 'receiver/targets-order');
    await runDrain(env(), fake, {
      workflowId: 'nm-node/targets-order/drain',
      targets: { lanes: [D(1000)], final: false, seq: 1 },
      reportTo: r.id,
      during: async (h) => {
        await statusWhen(h, 'finished at #1', (x) => x.finished === true);
        expect(fake.evictionsAsked()).toEqual(['app/a', 'app/b']);
        const [ea, eb] = fake.callsOf('evictPods');
        expect(eb!.onNode).not.toContain('app/a'); // a had left the node before b's eviction
        expect(ea!.startedAt).toBeLessThan(eb!.startedAt);
        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY)], final: true, seq: 2 });
      },
    });
    expect(fake.evictionsAsked()).toEqual(['app/a', 'app/b', 'app/early']);
    await r.close();
  });

  test.concurrent('a targeted WaitCompleted pod is waited for, never evicted, and the node is not finished until it completes (NM-7.2)', async () => {
    const job = pod('job', { action: 'WaitCompleted', reason: 'label slipway.dev/drain=wait-completed' });
    const fake = new FakeDrain('targets-job', [job, pod('web')]);
    const r = await receiver(env().client, 'receiver/targets-job');
    await runDrain(env(), fake, {
      workflowId: 'nm-node/targets-job/drain',
      targets: { lanes: [D(1000)], final: false, seq: 1 },
      reportTo: r.id,
      during: async (h) => {
        const waiting = await reportWhen(r, 'web gone, job waited for', (x) => x.counts?.activeEvictionRequests === 1 && x.counts.podsPendingEvictionRequest === 0);
        expect(waiting.finished).toBe(false);
        await sleep(300);
        expect(fake.evictionsAsked()).toEqual(['app/web']);
        expect((await h.query(drainStatusQuery)).finished).toBe(false);
        Object.assign(job, { phase: 'Succeeded', action: 'Delete' }); // the job completes
        await reportWhen(r, 'finished at #1', (x) => x.targetsSeq === 1 && x.finished === true);
        expect(fake.callsOf('deletePods').map((c) => (c.input as { pods: Array<{ name: string }> }).pods.map((p) => p.name))).toEqual([['job']]);
        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY)], final: true, seq: 2 });
      },
    });
    expect(fake.evictionsAsked()).toEqual(['app/web']);
    await r.close();
  });

  test.concurrent('a newer targets signal during the volume wait sends the drain back to the pods: the new lane is evicted before it is Drained', async () => {
    const fake = new FakeDrain('targets-volumes', [pod('low', { claims: ['app/data-low'] }), pod('high')]);
    fake.priorities.set('app/high', 5000);
    fake.leaveAfterMs = 50;
    fake.attached = ['app/data-low'];
    const result = await runDrain(env(), fake, {
      workflowId: 'nm-node/targets-volumes/drain',
      targets: { lanes: [D(1000)], final: true, seq: 1 },
      during: async (h) => {
        await statusWhen(h, 'the volume wait', (x) => x.phase === 'WaitingForVolumeDetach' && x.volumes !== undefined);
        expect(fake.evictionsAsked()).toEqual(['app/low']);
        await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY)], final: true, seq: 2 });
        await fakeWhen('high evicted', () => fake.evictionsAsked().includes('app/high'));
        fake.attached = [];
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 2, targets: { seq: 2 } });
  });

  test.concurrent('without targets, classify is asked as before (no lanes), no verdict is marked untargeted, and a drainTargets signal is ignored', async () => {
    const fake = new FakeDrain('no-targets', [pod('web'), pod('api', { order: 1 })]);
    fake.leaveAfterMs = 200;
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        await fakeWhen('the first eviction', () => fake.evictionsAsked().length === 1);
        await h.signal(drainTargetsSignal, { lanes: [], final: false, seq: 1 });
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(fake.evictionsAsked()).toEqual(['app/web', 'app/api']);
    expect(result.status.targets).toBeUndefined();
    // No lanes; only the rules the drain judged by last travel with a later classify.
    for (const c of fake.callsOf('classifyPods')) expect({ ...(c.input as object), drainRulesSeen: undefined }).toEqual({ nodeName: 'no-targets', drainRulesSeen: undefined });
  });
});
