// The drain workflow: cordon, then evict the node's pods wave by wave, then wait for volumes to
// detach. Usable on its own or as a child of the cycle and maintenance workflows. Every side effect
// is an activity; this code only decides. A worker killed at any line resumes here from history,
// and the evict activity re-reads the pods before acting, so no pod is evicted twice.
//
// Phases, one handler each (the table below, each in the file of its phase group):
//   Pending → Cordoning → Draining (one pass per change) → WaitingForVolumeDetach → Drained; Failed.
// A drain finishes only on a fresh read of the node that shows nothing left to evict or wait for.
// The state they share, its messages and reports: state.ts; the waits: wait.ts.
import { CancellationScope, ContinueAsNew, continueAsNew, isCancellation, workflowInfo } from '@temporalio/workflow';
import { NodesAttr } from '../search-attributes.js';
import { releaseSlot } from './budget.js';
import { draining } from './pass.js';
import { cordoning, pending } from './pending.js';
import { Drain, type DrainInput, type DrainResult } from './state.js';
import type { DrainPhase } from './status.js';
import { waitingForVolumeDetach } from './volumes.js';

export type { DrainCarry, DrainInput, DrainResult } from './state.js';

type Step = Exclude<DrainPhase, 'Drained' | 'Failed'>;

/** The table of contents: one handler per phase, each returning the next phase. */
const PHASES: Record<Step, (d: Drain) => Promise<DrainPhase>> = {
  Pending: pending, // pending.ts: read, hold (rules, hooks, budget slot), touching nothing
  Cordoning: cordoning, // pending.ts
  Draining: draining, // pass.ts: one pass per change, its waits in wait.ts
  WaitingForVolumeDetach: waitingForVolumeDetach, // volumes.ts
};

export async function drainWorkflow(input: DrainInput): Promise<DrainResult> {
  const d = new Drain(input);
  // Every drain (CLI, cycle, maintenance) is found by node and phase in the Web UI.
  d.upsertPhase([{ key: NodesAttr, value: [input.nodeName] }]);
  try {
    while (d.st.phase !== 'Drained') {
      const from = d.st.phase;
      d.st.phase = await PHASES[d.st.phase as Step](d);
      if (d.st.phase !== from) d.upsertPhase();
      if (d.st.phase === 'Drained' && d.st.targets) d.st.finished = true; // also a node gone: nothing is left on it
      d.publish();
      if (d.st.phase !== 'Drained' && workflowInfo().continueAsNewSuggested) {
        await d.flushReports(); // targets mode: the coordinator must not miss a finished report
        await continueAsNew<typeof drainWorkflow>(d.carry());
      }
    }
  } catch (err) {
    // Cancelled (a maintenance completed, NM-5.6): leave the Evacuations this drain joined.
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => d.evac.withdrawAll(d.requesting()));
    // Failed or cancelled: the CLI drain's budget slot goes back (not on continue-as-new: the next run holds it).
    if (!(err instanceof ContinueAsNew)) await CancellationScope.nonCancellable(() => releaseSlot(d));
    throw err;
  }
  await d.flushReports();
  await releaseSlot(d);
  return { status: d.st };
}
