// A CLI drain's NodeDisruptionBudget slot (issue 15): a CLI drain (drain/<node>, no parent) holds a
// slot in every budget selecting the node from before its cordon to its end; a cycle's or a
// maintenance's drain is covered by theirs. Pending waits here, touching nothing, while refused.
import { condition, workflowInfo } from '@temporalio/workflow';
import { isCliDrainWorkflowId } from '../ids.js';
import { steps } from '../proxies.js';
import type { DrainPhase } from './status.js';
import type { Drain } from './state.js';

/** How often a CLI drain refused a NodeDisruptionBudget slot asks again. */
const BUDGET_RETRY_MS = 5_000;

/** Whether the drain may cordon: it holds its slot, or needs none. Asks the ledger at most once per call. */
export async function slotTaken(d: Drain): Promise<boolean> {
  if (d.budget.slot) return true;
  if (d.input.targets || d.input.reportTo || workflowInfo().parent || !isCliDrainWorkflowId(workflowInfo().workflowId)) return true;
  d.budget.inLedger = true; // before the ask: a cancel during it must still give back what it writes
  const r = await steps.acquireDisruption.executeWithOptions({ summary: `disruption budget slot for ${d.node}` }, [{ holder: workflowInfo().workflowId, nodes: [d.node] }]);
  const refused = r.waiting.find((w) => w.node === d.node);
  if (refused) d.st.budgetWait = refused.reason;
  else delete d.st.budgetWait;
  d.budget.slot = !refused;
  return d.budget.slot;
}

/** Refused a slot: ask again until granted (a signal asks at once); then Pending reads the node again before the cordon. */
export async function awaitSlot(d: Drain): Promise<DrainPhase> {
  for (;;) {
    d.publish();
    await condition(() => d.wake, BUDGET_RETRY_MS);
    d.wake = false;
    if (workflowInfo().continueAsNewSuggested) return 'Pending'; // the next run asks again
    if (await slotTaken(d)) return 'Pending';
  }
}

/** The drain ended (any way but continue-as-new): its budget slot, or its place in the queue, goes back. */
export async function releaseSlot(d: Drain): Promise<void> {
  if (!d.budget.inLedger) return;
  await steps.releaseDisruption.executeWithOptions({ summary: `release the budget slot of ${d.node}` }, [{ holder: workflowInfo().workflowId, nodes: [d.node] }]);
  d.budget.inLedger = false;
  d.budget.slot = false;
}
