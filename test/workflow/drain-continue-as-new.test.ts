// The drain's continue-as-new path. A real drain continues as new when the server suggests it
// (history past limit.historyCount.suggestContinueAsNew, 4096 events by default on this server);
// these dev servers suggest it much sooner, so a drain runs through many runs within seconds. What
// each run hands the next (Drain.carry: status, refusals, skips, the returns ledger) must make the
// whole chain behave as one drain.
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { EvictInput } from '../../activities/drain/evict.js';
import type { WaveWaitInput } from '../../activities/drain/wave-wait.js';
import type { PodVerdict } from '../../shared/drain.js';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ClassifyInput } from '../../activities/drain/snapshot.js';
import type { DrainInput } from '../../workflows/drain/drain.js';
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { drainTargetsSignal, skipPodSignal } from '../../workflows/messages.js';
import { FakeDrain, fakeWhen, pod, receiver, reportWhen, runDrain, statusWhen } from '../support/fake-drain.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const SUGGEST_AFTER_EVENTS = 60;
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget web needs 2 healthy pods and has 2 currently";

/** Every run of a workflow, from its first, following continue-as-new. */
async function runsOf(client: Client, workflowId: string, firstRunId: string): Promise<temporal.api.history.v1.IHistory[]> {
  const runs: temporal.api.history.v1.IHistory[] = [];
  for (let runId: string | undefined = firstRunId; runId; ) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push(history);
    runId = history.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

describe(`a server that suggests continue-as-new after ${SUGGEST_AFTER_EVENTS} events`, () => {
  const env = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_AFTER_EVENTS } });

  test('continues as new when the server suggests it, carrying status, refusals, operator skips and the returns ledger into the next run', async () => {
    let n = 0;
    const sticky = (): PodVerdict => pod(`sticky-${n++}`, { controller: 'ReplicaSet app/sticky', toleratesUnschedulable: true });
    const fake = new FakeDrain('can', [pod('web'), pod('keep'), pod('api')]);
    fake.refusals.set('app/web', PDB);
    fake.refusals.set('app/keep', PDB);
    fake.recreate = (left) => (left.controller === 'ReplicaSet app/sticky' ? sticky() : undefined);
    // The skip is sent while the first run is short of the suggestion (signals that arrive as a run
    // continues as new are the next describe's matter); then a pass every 100 ms grows the history.
    let firstRunId = '';
    let startedAt: string | undefined;
    let skippedAt = 0;
    const result = await runDrain(env(), fake, {
      workflowId: 'drain/can',
      during: async (h) => {
        firstRunId = h.firstExecutionRunId;
        startedAt = (await statusWhen(h, 'the drain blocked', (s) => (s.wave?.blocked.length ?? 0) === 1 && s.wave!.blocked[0]!.pods.length === 2)).startedAt;
        await h.signal(skipPodSignal, { namespace: 'app', name: 'keep', reason: 'kept by hand' });
        await fakeWhen('the skip recorded', () => fake.events.length === 1);
        expect((await h.describe()).runId).toBe(firstRunId);
        skippedAt = Date.now();
        fake.waveRefreshMs = 100;
        // A controller's pod arrives and keeps coming back: evicted 3 times (2 s and 4 s apart), across runs.
        fake.pods.push(sticky());
        await statusWhen(h, 'the returning pod left alone', (s) => s.returning.length === 1);
        expect((await h.describe()).runId).not.toBe(firstRunId);
        fake.refusals.delete('app/web'); // the PDB allows it now
      },
    });

    const runs = await runsOf(env().client, 'drain/can', firstRunId);
    expect(runs.length).toBeGreaterThanOrEqual(5);
    // Bounded: each run stops soon after the suggestion (one pass adds about a dozen events).
    for (const r of runs) expect(r.events!.length).toBeLessThan(SUGGEST_AFTER_EVENTS + 30);

    // Status: one drain's, from the first run's start to the last run's end.
    expect(result.status).toMatchObject({ phase: 'Drained', startedAt, completedWaves: [0], evicted: 5 }); // api, web, sticky-0..2
    expect(result.status.forced).toEqual([{ pod: 'app/keep', action: 'Skip', by: 'signal', at: expect.any(String), reason: 'kept by hand' }]);
    // Skips: the skipped pod is never tried again, in any run.
    const later = fake.callsOf('waitForWave').filter((c) => c.startedAt > skippedAt);
    expect(later.length).toBeGreaterThan(runs.length);
    for (const c of later) expect((c.input as WaveWaitInput).refused.map((p) => p.name)).not.toContain('keep');
    expect(fake.on('app/keep')?.terminating).toBe(false);
    // Refusals: a refused pod is retried by the wave waits, never evicted afresh by a new run.
    expect(fake.evictionsAsked().filter((k) => k === 'app/web')).toHaveLength(1);
    expect(later.every((c) => (c.input as WaveWaitInput).refused.some((p) => p.name === 'web'))).toBe(true);
    // Returns ledger: the arrivals are counted across runs, so the chase stops after 3, as in one run.
    const stickyEvictions = fake.callsOf('evictPods').flatMap((c) => (c.input as EvictInput).pods.map((p) => p.name)).filter((x) => x.startsWith('sticky-'));
    expect(stickyEvictions).toEqual(['sticky-0', 'sticky-1', 'sticky-2']);
    expect(result.status.returning.map((r) => r.pod)).toEqual(['app/sticky-3']);
  }, 40_000);
});

// With the suggestion from a run's first event, every pass boundary continues as new, including the
// one a signal causes (it ends the wave wait): what the signal asked for must reach the next run.
describe('a server that suggests continue-as-new at once', () => {
  const env = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 1 } });

  test('a skipPod that ends a pass as the run continues as new is not lost: the next run applies it', async () => {
    const fake = new FakeDrain('can-signal', [pod('web'), pod('api')]);
    fake.refusals.set('app/web', PDB);
    let firstRunId = '';
    const result = await runDrain(env(), fake, {
      workflowId: 'drain/can-signal',
      during: async (h) => {
        firstRunId = h.firstExecutionRunId;
        await fakeWhen('a wave wait retrying web', () => fake.callsOf('waitForWave').some((c) => c.endedAt === undefined && (c.input as WaveWaitInput).refused.some((p) => p.name === 'web')));
        await h.signal(skipPodSignal, { namespace: 'app', name: 'web', reason: 'kept by hand' });
        await waitFor('the skip applied', async () => fake.events.length === 1 || undefined, { timeoutMs: 5000, intervalMs: 50 });
      },
    });
    expect(result.status.forced).toEqual([{ pod: 'app/web', action: 'Skip', by: 'signal', at: expect.any(String), reason: 'kept by hand' }]);
    expect((await runsOf(env().client, 'drain/can-signal', firstRunId)).length).toBeGreaterThan(2);
  });

  test('targets mode: the targets (from the input, then from a signal) are carried from run to run, and the reports still reach the coordinator', async () => {
    const fake = new FakeDrain('can-targets', [pod('low'), pod('high')]);
    fake.priorities.set('app/high', 5000);
    const r = await receiver(env().client, 'receiver/can-targets');
    let firstRunId = '';
    const result = await runDrain(env(), fake, {
      workflowId: 'drain/can-targets',
      targets: { lanes: [{ podType: 'Default', podPriority: 1000 }], final: false, seq: 1 },
      reportTo: r.id,
      during: async (h) => {
        firstRunId = h.firstExecutionRunId;
        await reportWhen(r, 'finished at #1', (x) => x.targetsSeq === 1 && x.finished === true);
        expect(fake.evictionsAsked()).toEqual(['app/low']);
        await h.signal(drainTargetsSignal, { lanes: [{ podType: 'Default', podPriority: MAX_PRIORITY }], final: true, seq: 2 });
      },
    });
    expect(result.status).toMatchObject({ phase: 'Drained', finished: true, targets: { seq: 2, final: true } });
    expect(fake.evictionsAsked()).toEqual(['app/low', 'app/high']);
    const runs = await runsOf(env().client, 'drain/can-targets', firstRunId);
    expect(runs.length).toBeGreaterThan(2);
    // Every later run's input carries the targets in effect; no classify ever went out without lanes.
    const inputs = runs.map((r) => defaultPayloadConverter.fromPayload<DrainInput>(r.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!));
    expect(inputs.at(-1)!.targets).toEqual({ lanes: [{ podType: 'Default', podPriority: MAX_PRIORITY }], final: true, seq: 2 });
    for (const i of inputs) expect(i.targets?.seq).toBeGreaterThanOrEqual(1);
    expect(fake.callsOf('classifyPods').every((c) => (c.input as ClassifyInput).targets !== undefined)).toBe(true);
    expect((await r.reports()).at(-1)).toMatchObject({ targetsSeq: 2, finished: true, drained: true });
    await r.close();
  });
});
