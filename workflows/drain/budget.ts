// A CLI drain's NodeDisruptionBudget slot (issue 15): a CLI drain (drain/<node>, no parent) holds a
// slot in every budget selecting the node from before its cordon to its end; a cycle's or a
// maintenance's drain is covered by theirs. Pending waits here, touching nothing, while refused.
import { workflowInfo } from '@temporalio/workflow';
import type { AcquireResult } from '../../activities/budget/index.js';
import { isCliDrainWorkflowId } from '../ids.js';
import { steps } from '../proxies.js';
import type { DrainPhase } from './status.js';
import type { Drain } from './state.js';
import { MAX_WINDOW_MS, untilWoken, waits } from './wait.js';

/** Whether the drain may cordon: it holds its slot, or needs none. Asks the ledger at most once per call. */
export async function slotTaken(d: Drain): Promise<boolean> {
  if (d.budget.slot) return true;
  if (d.input.targets || d.input.reportTo || workflowInfo().parent || !isCliDrainWorkflowId(workflowInfo().workflowId)) return true;
  d.budget.inLedger = true; // before the ask: a cancel during it must still give back what it writes
  return book(d, await steps.acquireDisruption.executeWithOptions({ summary: `disruption budget slot for ${d.node}` }, [{ holder: workflowInfo().workflowId, nodes: [d.node] }]));
}

/** The ledger's answer, into the drain's state and status. True: the slot is held. */
function book(d: Drain, r: AcquireResult): boolean {
  const refused = r.waiting.find((w) => w.node === d.node);
  if (refused) d.st.budgetWait = refused.reason;
  else delete d.st.budgetWait;
  d.budget.slot = !refused;
  return d.budget.slot;
}

/**
 * Refused a slot: wait for one (the activity asks the ledger on every budget change and returns on
 * a change of answer, so the history grows with changes, not with asks); a signal asks at once.
 * Granted, Pending reads the node again (hooks, rules, pods) before the cordon.
 */
export async function awaitSlot(d: Drain): Promise<DrainPhase> {
  const holder = workflowInfo().workflowId;
  for (;;) {
    d.publish();
    const summary = `waiting for a disruption budget slot for ${d.node}: ${d.st.budgetWait ?? ''}`;
    const r = await untilWoken(d, () =>
      waits.waitForDisruption.executeWithOptions({ summary }, [{ holder, nodes: [d.node], refusals: { [d.node]: d.st.budgetWait ?? '' }, timeoutMs: MAX_WINDOW_MS }]),
    );
    if (r ? book(d, r) : await slotTaken(d)) return 'Pending';
    if (workflowInfo().continueAsNewSuggested) return 'Pending'; // the next run asks again
  }
}

/** The drain ended (any way but continue-as-new): its budget slot, or its place in the queue, goes back. */
export async function releaseSlot(d: Drain): Promise<void> {
  if (!d.budget.inLedger) return;
  await steps.releaseDisruption.executeWithOptions({ summary: `release the budget slot of ${d.node}` }, [{ holder: workflowInfo().workflowId, nodes: [d.node] }]);
  d.budget.inLedger = false;
  d.budget.slot = false;
}
