// The coordinator's NodeDisruptionBudget slot (issue 15): taken before its first cordon write, given
// back after the restoring write (release.ts). While refused it writes nothing and waits for a budget
// to change (waitForDisruption), in the background: the answer wakes the loop.
import { CancellationScope, workflowInfo } from '@temporalio/workflow';
import { steps, WATCH_WINDOW_MS, watchSteps } from '../../proxies.js';
import type { AcquireResult } from '../../../activities/budget/index.js';
import type { Coordinator } from '../node.js';
import { heldAs, holdInput } from './hold.js';

/** The waits: they return at the latest after 20 minutes (RENEW_MS), so half an hour bounds them. */
const waits = watchSteps('30 minutes');

/**
 * Issue 15: the node may be cordoned only with a slot in every NodeDisruptionBudget selecting it.
 * The first ask and the cordon are one activity (#27 hand-over): the write takes the slot, then
 * holds the node, and writes nothing when refused ('held': the node shows this pass's state already).
 * While refused, waitForDisruption asks again whenever a budget changes and answers when the slot
 * is granted or the refusal reads differently (a message that wakes the loop meanwhile only
 * refreshes the reports); granted so, the pass's hold write follows.
 */
export async function slotTaken(c: Coordinator): Promise<boolean | 'held'> {
  if (c.slot) return true;
  const answer = c.slotWait?.answer;
  if (c.slotWait && !answer) return false; // still waiting
  let refused: string | undefined;
  let held = false;
  if (answer) {
    c.slotWait = undefined;
    refused = answer.waiting.find((w) => w.node === c.node)?.reason;
  } else {
    c.inLedger = true; // before the ask: a release during it must still give back what it writes
    const { input, key } = holdInput(c);
    c.lookedAtMs = Date.now();
    const r = await steps.writeMaintenanceNodeState.executeWithOptions({ summary: `disruption budget slot for ${c.node}, then hold it for ${input.holders.join(', ')}` }, [
      { ...input, slot: { holder: workflowInfo().workflowId } },
    ]);
    refused = r.slotRefused;
    if (refused === undefined) {
      await heldAs(c, key, input.holders, r);
      held = true;
    }
  }
  c.budgetWait = refused;
  c.slot = refused === undefined;
  if (refused !== undefined) waitForSlot(c, refused);
  return held ? 'held' : c.slot;
}

/** The budget wait, in the background: its answer wakes the loop. */
function waitForSlot(c: Coordinator, previous: string): void {
  const scope = new CancellationScope();
  const w: NonNullable<Coordinator['slotWait']> = { previous, scope };
  c.slotWait = w;
  const ask = { holder: workflowInfo().workflowId, nodes: [c.node], refusals: { [c.node]: previous }, timeoutMs: WATCH_WINDOW_MS };
  scope
    .run(() => waits.waitForDisruption.executeWithOptions({ summary: `wait for a disruption budget slot for ${c.node}` }, [ask]))
    .then(
      (r) => {
        if (c.slotWait !== w) return;
        w.answer = r;
        c.dirty = true;
      },
      () => {
        if (c.slotWait === w) c.slotWait = undefined; // cancelled (released); or failed: asked again on the next pass
      },
    );
}

/** Stops the budget wait (the node is released): its ask may still land, the release gives back what it wrote. */
export function stopSlotWait(c: Coordinator): void {
  c.slotWait?.scope.cancel();
  c.slotWait = undefined;
}
