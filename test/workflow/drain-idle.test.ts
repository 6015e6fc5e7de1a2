// #26.1 for the drain: a drain that waits (a PDB refuses its evictions, pre-drain hooks or an invalid
// DrainRule hold it, a NodeDisruptionBudget has no slot for it, it is finished at non-final targets,
// volumes stay attached) costs history events
// in proportion to changes, not to the time it waits: at most 30 an hour while nothing changes.
// Time is skipped, not waited for: the scripted waits end at once as at the end of their window
// (asked for `timeoutMs`, they look once), so hours pass in seconds. The figure is the history's
// growth over that simulated time: the windows skipped plus the real time that passed.
import type { WorkflowHandle } from '@temporalio/client';
import { MAX_PRIORITY, type Lane } from '../../api/drain-plan.js';
import type { DrainTargets } from '../../workflows/messages.js';
import { drainTargetsSignal } from '../../workflows/messages.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeDrain, pod, statusWhen } from '../support/fake-drain.js';
import type { DrainStatus } from '../../workflows/drain/status.js';
import { drainWorkflow } from '../../workflows/index.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget web needs 2 healthy pods and has 2 currently";
const HOUR_MS = 3_600_000;
/** The bound (issue 26): a renewal every few minutes at most. */
const MAX_EVENTS_PER_HOUR = 30;
/** Simulated time to measure over, or real time, whichever comes first. */
const SIMULATED_MS = 3 * HOUR_MS;
const REAL_MS = 12_000;

type Impl = (input: { timeoutMs?: number; windowMs?: number; endsAt?: number }, ...more: unknown[]) => Promise<unknown>;

/** The fake's activities with every wait's window skipped: it looks once and ends; `skipped` adds up the windows. */
function skippingTime(fake: FakeDrain): { activities: Record<string, Impl>; skipped: () => number } {
  let skipped = 0;
  const acts = { ...fake.activities() } as unknown as Record<string, Impl>;
  for (const name of ['waitForWave', 'waitForLifecycleHooks', 'waitForDrainRuleChange', 'waitForDisruption', 'waitForVolumeDetach']) {
    const real = acts[name];
    if (!real) continue;
    acts[name] = async (input, ...more) => {
      const window = input.windowMs !== undefined ? { windowMs: 0 } : { timeoutMs: 0, endsAt: undefined };
      const out = await real({ ...input, ...window }, ...more);
      skipped += input.windowMs ?? input.timeoutMs ?? 0;
      return out;
    };
  }
  return { activities: acts, skipped: () => skipped };
}

/** History events per hour of the drain while it stays as it is: measured over SIMULATED_MS (or REAL_MS of real time). */
async function eventsPerHour(h: WorkflowHandle, skipped: () => number): Promise<{ events: number; simulatedMs: number; perHour: number }> {
  const count = async () => (await h.fetchHistory()).events!.length;
  const [e0, s0, t0] = [await count(), skipped(), Date.now()];
  const simulated = () => skipped() - s0 + (Date.now() - t0);
  while (simulated() < SIMULATED_MS && Date.now() - t0 < REAL_MS) await new Promise((r) => setTimeout(r, 200));
  const [e1, simulatedMs] = [await count(), simulated()];
  return { events: e1 - e0, simulatedMs, perHour: Math.round(((e1 - e0) * HOUR_MS) / simulatedMs) };
}

/** Runs the drain on time-skipping waits; `blocked` waits until it is blocked and returns how to release it. */
async function measure(fake: FakeDrain, blocked: (h: WorkflowHandle) => Promise<() => Promise<void> | void>, o: { workflowId?: string; targets?: DrainTargets; realTime?: boolean } = {}) {
  const { activities, skipped } = o.realTime ? { activities: fake.activities() as unknown as Record<string, Impl>, skipped: () => 0 } : skippingTime(fake);
  const workflowId = o.workflowId ?? `drain/${fake.node.name}`;
  let figure: Awaited<ReturnType<typeof eventsPerHour>> | undefined;
  const result = await env().withWorker(activities, async (taskQueue) => {
    const h = await env().client.workflow.start(drainWorkflow, { taskQueue, workflowId, args: [{ nodeName: fake.node.name, ...(o.targets ? { targets: o.targets } : {}) }] });
    const release = await blocked(h);
    if (o.realTime) {
      await release();
      return h.result();
    }
    figure = await eventsPerHour(h, skipped);
    console.log(`#26.1 ${workflowId}: ${figure.events} history events over ${(figure.simulatedMs / 60_000).toFixed(1)} simulated minutes: ${figure.perHour} an hour`);
    await release();
    return h.result();
  }, { workflowIds: [workflowId] });
  return { result, figure: figure! };
}

/**
 * A drain that waits (`what`, seen in its status when `when` holds) and is then released: it costs at
 * most MAX_EVENTS_PER_HOUR while it waits, and ends Drained with its one pod evicted (`status`: more to expect).
 */
async function expectQuietWait(fake: FakeDrain, what: string, when: (s: DrainStatus) => boolean, release: (h: WorkflowHandle) => Promise<void> | void, o: { workflowId?: string; targets?: DrainTargets; status?: Record<string, unknown> } = {}) {
  const { result, figure } = await measure(fake, async (h) => {
    await statusWhen(h, what, when);
    return () => release(h);
  }, o);
  expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1, ...o.status });
  expect(figure.perHour).toBeLessThanOrEqual(MAX_EVENTS_PER_HOUR);
}

describe('#26.1 a drain that waits costs history events in proportion to changes, not time', () => {
  test.concurrent(`#26.1 a PDB-blocked drain costs at most ${MAX_EVENTS_PER_HOUR} history events an hour while nothing changes`, async () => {
    const fake = new FakeDrain('idle-pdb', [pod('web')]);
    fake.refusals.set('app/web', PDB);
    await expectQuietWait(fake, 'the drain blocked by the PDB', (s) => (s.wave?.blocked.length ?? 0) === 1, () => fake.refusals.clear());
  });

  test.concurrent('#26.1 a PDB-blocked drain still shows the PDB\'s current words: a new refusal ends the wait, not its window', async () => {
    const fake = new FakeDrain('idle-pdb-words', [pod('web')]);
    fake.refusals.set('app/web', PDB);
    const { result } = await measure(fake, async (h) => {
      await statusWhen(h, 'the drain blocked by the PDB', (s) => (s.wave?.blocked.length ?? 0) === 1);
      fake.refusals.set('app/web', PDB.replace('has 2 currently', 'has 1 currently'));
      const s = await statusWhen(h, 'the new words in status', (x) => JSON.stringify(x.wave).includes('has 1 currently'));
      expect(s.message).toContain('has 1 currently');
      return () => void fake.refusals.clear();
    }, { realTime: true });
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1 });
  });

  test.concurrent(`#26.1 a drain held by pre-drain hooks costs at most ${MAX_EVENTS_PER_HOUR} history events an hour`, async () => {
    const fake = new FakeDrain('idle-hooks', [pod('web')], { preDrainHooks: ['backup'] });
    await expectQuietWait(fake, 'the drain held by hooks', (s) => (s.hooks?.length ?? 0) === 1, () => void delete fake.node.preDrainHooks);
  });

  test.concurrent(`#26.1 a drain held by an invalid DrainRule costs at most ${MAX_EVENTS_PER_HOUR} history events an hour`, async () => {
    const fake = new FakeDrain('idle-rule', [pod('web')]);
    fake.heldBy = ['DrainRule bad is invalid: spec.drain.order: Too big'];
    await expectQuietWait(fake, 'the drain held by the rule', (s) => s.heldBy.length === 1, () => fake.rulesChanged([]));
  });

  test.concurrent(`#26.1 a drain waiting for volumes to detach costs at most ${MAX_EVENTS_PER_HOUR} history events an hour`, async () => {
    const fake = new FakeDrain('idle-volumes', [pod('web')]);
    fake.attached = ['app/data'];
    await expectQuietWait(fake, 'the volume wait', (s) => s.phase === 'WaitingForVolumeDetach' && s.volumes !== undefined, () => void (fake.attached = []), { status: { volumes: { timedOut: false } } });
  });

  test.concurrent(`#26.1 a CLI drain waiting for a budget slot costs at most ${MAX_EVENTS_PER_HOUR} history events an hour`, async () => {
    const fake = new FakeDrain('idle-budget', [pod('web')]);
    fake.budget = new FakeBudget(1, 'idle');
    fake.budget.disrupted.set('other-node', 'someone-else');
    await expectQuietWait(fake, 'the drain waiting for a slot', (s) => s.budgetWait !== undefined, () => fake.budget.disrupted.clear());
  });

  test.concurrent(`#26.1 a drain whose pod an evacuator has in hand costs at most ${MAX_EVENTS_PER_HOUR} history events an hour, and a withdrawal is acted on at once`, async () => {
    const fake = new FakeDrain('idle-evac', [pod('db', { evacuators: ['db-operator.test'] })]);
    // The evacuator withdraws (completed): no evacuator is left, the pod falls back to eviction.
    await expectQuietWait(fake, 'the drain waiting on the evacuator', (s) => (s.wave?.evacuating?.length ?? 0) === 1, () => void (fake.evacuation = (p) => ({ uid: p.uid, state: 'fallback' })));
  });

  test.concurrent(`#26.1 a drain finished at non-final targets costs at most ${MAX_EVENTS_PER_HOUR} history events an hour`, async () => {
    const fake = new FakeDrain('idle-targets', [pod('web')], { cordoned: true });
    const lanes: Lane[] = [{ podType: 'Default', podPriority: MAX_PRIORITY }];
    await expectQuietWait(fake, 'the drain finished at targets #1', (s) => s.finished === true, (h) => h.signal(drainTargetsSignal, { lanes, final: true, seq: 2 }), { workflowId: 'nm-node/idle-targets/drain', targets: { lanes, final: false, seq: 1 } });
  });
});
