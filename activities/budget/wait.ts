// Waiting for a NodeDisruptionBudget slot (issue 26: idle costs nothing): one long, heartbeating
// activity that asks the ledger every few seconds, as a waiter must (one that stops asking is
// dropped as stale), and returns only when the answer changes (granted, or refused for other
// reasons: status then says so) or its window ends. A holder waiting for hours costs its workflow
// a renewal per window, not history per ask.
import { Context, heartbeat } from '@temporalio/activity';
import type { Kube } from '../../kube/client.js';
import { createBudgetActivities, type AcquireResult, type DisruptionInput } from './index.js';

/** How often the wait asks again (well inside WAITER_STALE_MS). */
export const DISRUPTION_ASK_MS = 5_000;

export interface DisruptionWaitInput extends DisruptionInput {
  /** node → the refusal the workflow shows now: an answer that differs ends the wait. */
  refusals: Record<string, string>;
  timeoutMs: number;
}

/** The wait over any ledger (the real one, or a test's). */
export function waitForDisruptionWith(acquire: (input: DisruptionInput) => Promise<AcquireResult>, askMs = DISRUPTION_ASK_MS) {
  return async (input: DisruptionWaitInput): Promise<AcquireResult> => {
    const ctx = Context.current();
    const ends = Date.now() + input.timeoutMs;
    for (;;) {
      const r = await acquire({ holder: input.holder, nodes: input.nodes });
      heartbeat(r.waiting);
      const changed = r.waiting.length < input.nodes.length || r.waiting.some((w) => input.refusals[w.node] !== w.reason);
      if (changed || Date.now() + askMs > ends) return r;
      await ctx.sleep(askMs); // rejects when cancelled (a signal woke the workflow)
    }
  };
}

export function createBudgetWaitActivities(kube: Kube) {
  return { waitForDisruption: waitForDisruptionWith(createBudgetActivities(kube).acquireDisruption) };
}
