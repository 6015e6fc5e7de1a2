// #26.1 for the CycleNodeRequest: a request that waits for a NodeDisruptionBudget slot, or for nodes
// a NodeMaintenance holds (NM-7.6), costs history events in proportion to changes, not to the time
// it waits: at most 30 an hour while nothing changes, and it goes on at once when the slot frees or
// the node is let go. Time is skipped as in drain-idle.test.ts: the scripted waits end at once as
// at the end of their window (asked for `timeoutMs`, they look once), and the windows add up.
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery } from '../../workflows/messages.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeCycle } from '../support/fake-cycle.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const HOUR_MS = 3_600_000;
/** The bound (issue 26): a renewal every few minutes at most. */
const MAX_EVENTS_PER_HOUR = 30;
const SIMULATED_MS = 3 * HOUR_MS;
const REAL_MS = 12_000;

type Impl = (input: { timeoutMs?: number }, ...more: unknown[]) => Promise<unknown>;

/** The fake's activities with the request's waits skipping their window; `skipped` adds up the windows. */
function skippingTime(fake: FakeCycle, heartbeatTimeouts: Set<number | undefined>): { activities: Record<string, Impl>; skipped: () => number } {
  let skipped = 0;
  const acts = { ...fake.activities() } as unknown as Record<string, Impl>;
  for (const name of ['waitForDisruption', 'waitForHeldNodes']) {
    const real = acts[name]!;
    acts[name] = async (input, ...more) => {
      heartbeatTimeouts.add(Context.current().info.heartbeatTimeoutMs);
      const out = await real({ ...input, timeoutMs: 0 }, ...more);
      skipped += input.timeoutMs ?? 0;
      return out;
    };
  }
  return { activities: acts, skipped: () => skipped };
}

/** History events per hour while the request stays as it is: over SIMULATED_MS of skipped plus real time (or REAL_MS of real time). */
async function eventsPerHour(h: WorkflowHandle, skipped: () => number): Promise<number> {
  const count = async () => (await h.fetchHistory()).events!.length;
  const [e0, s0, t0] = [await count(), skipped(), Date.now()];
  const simulated = () => skipped() - s0 + (Date.now() - t0);
  while (simulated() < SIMULATED_MS && Date.now() - t0 < REAL_MS) await new Promise((r) => setTimeout(r, 200));
  const [e1, ms] = [await count(), simulated()];
  const perHour = Math.round(((e1 - e0) * HOUR_MS) / ms);
  console.log(`#26.1 ${h.workflowId}: ${e1 - e0} history events over ${(ms / 60_000).toFixed(1)} simulated minutes: ${perHour} an hour`);
  return perHour;
}

async function measure(fake: FakeCycle, name: string, waiting: (s: CycleStatus) => boolean, release: () => void): Promise<{ perHour: number; result: CycleStatus }> {
  const heartbeatTimeouts = new Set<number | undefined>();
  const { activities, skipped } = skippingTime(fake, heartbeatTimeouts);
  const { workflowId, input } = fake.request(name, { cycleSettings: { method: 'Drain', concurrency: 1 } });
  let perHour = 0;
  const result = await env().withWorker(activities, async (taskQueue) => {
    const h = await env().client.workflow.start(cycleNodeRequestWorkflow, { taskQueue, workflowId, args: [input] });
    await waitFor('the request waiting', async () => waiting(await h.query(cycleStatusQuery)), { timeoutMs: 15_000, intervalMs: 50 });
    perHour = await eventsPerHour(h, skipped);
    release();
    return (await h.result()) as CycleStatus;
  }, { workflowIds: [workflowId] });
  // #26.1 (Temporal CPU): a watch nothing cancels for an operator's sake heartbeats every 20 s (a third of 60 s), not every 2 s.
  expect([...heartbeatTimeouts]).toEqual([60_000]);
  return { perHour, result };
}

describe('#26.1 a CycleNodeRequest that waits costs history events in proportion to changes, not time', () => {
  test.concurrent(`#26.1 a request refused a NodeDisruptionBudget slot costs at most ${MAX_EVENTS_PER_HOUR} history events an hour, and goes on when the slot frees`, async () => {
    const fake = new FakeCycle('idle-nb', 1);
    fake.budget = new FakeBudget(1);
    fake.budget.disrupted.set('other-node', 'someone-else');
    const { perHour, result } = await measure(fake, 'idle-nb', (s) => s.message.startsWith('waiting for NodeDisruptionBudget'), () => fake.budget!.disrupted.delete('other-node'));
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 1 });
    expect(perHour).toBeLessThanOrEqual(MAX_EVENTS_PER_HOUR);
  }, 60_000);

  test.concurrent(`#26.1 a request left with held nodes costs at most ${MAX_EVENTS_PER_HOUR} history events an hour, and cycles them once they are let go`, async () => {
    const fake = new FakeCycle('idle-held', 3);
    for (const n of fake.nodes) fake.maintenanceHolds.set(n.name, { maintenance: 'kernel-upgrade', stage: 'Drain' });
    const { perHour, result } = await measure(fake, 'idle-held', (s) => s.message.startsWith('waiting for NodeMaintenance'), () => fake.maintenanceHolds.clear());
    expect(result).toMatchObject({ phase: 'Successful', nodesCycled: 3 });
    expect(fake.nodesOf('claimNodes').flat().filter((n) => n === 'idle-held-0').length).toBeLessThanOrEqual(2); // once held, once let go
    expect(perHour).toBeLessThanOrEqual(MAX_EVENTS_PER_HOUR);
  }, 60_000);
});
