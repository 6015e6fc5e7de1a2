// Issue 27: a maintenance without spec.rollout holds every node it has cordoned until Complete, so
// one whose selected nodes outnumber what a NodeDisruptionBudget allows at once can never finish
// Drain. It says so at once: condition CannotFinish=True with the budget's words (the bridge writes
// a Warning Event when it turns True), checked in each Idle preview pass and at Cordon and Drain
// entry (activities/budget/fit.ts; the judgement is shared/budget-fit.ts). With a rollout the nodes
// are taken a few at a time and released, so it can finish: no check, the condition clears.
import { steps } from '../proxies.js';
import type { Condition } from './types.js';

interface Checked {
  spec: { rollout?: unknown };
  /** The budgets' verdict: a message when it cannot finish; '' once it can again; undefined before any. */
  cannotFinish?: string;
  dirty: boolean;
}

/** Asks whether the budgets can hold `nodes` at once (only without a rollout), and records the answer. */
export async function checkCannotFinish(m: Checked, nodes: readonly string[]): Promise<void> {
  const r = m.spec.rollout ? {} : await steps.maintenanceBudgetFit.executeWithOptions({ summary: 'budgets vs. selection' }, [{ nodes: [...nodes] }]);
  const next = r.cannotFinish ?? (m.cannotFinish === undefined ? undefined : '');
  if (next !== m.cannotFinish) m.dirty = true;
  m.cannotFinish = next;
}

/** CannotFinish, once a check has found it (True), and False from when it no longer holds; none before. */
export function cannotFinishCondition(f: { cannotFinish?: string; completed: boolean }): Condition | undefined {
  if (f.cannotFinish === undefined) return undefined;
  if (f.cannotFinish && !f.completed) return { type: 'CannotFinish', status: 'True', reason: 'BudgetTooSmall', message: f.cannotFinish };
  return { type: 'CannotFinish', status: 'False', reason: f.completed ? 'Completed' : 'WithinBudgets', message: '' };
}
