// Healing: stop the node cycles, put every node not terminated back (re-attached, uncordoned,
// unmarked), lift scale-down protection, and only then release the node groups. Compensations run
// even when the workflow itself is being cancelled.
import { ApplicationFailure, CancellationScope, condition, getExternalWorkflowHandle, isCancellation } from '@temporalio/workflow';
import { nodeCycleWorkflowId } from './types.js';
import type { Next, Request } from './request.js';
import { act, CHUNK } from './steps.js';
import { releaseBudgetSlots } from './batches.js';
import { fewNames } from '../drain/status.js';

/** How long healing waits for cancelled node cycles to stop before it heals anyway. */
const STOP_LIMIT_MS = 2 * 60_000;

export function startHealing(req: Request, err: unknown): void {
  const message = isCancellation(err) ? 'cancelled (the request was deleted)' : ((err as Error & { cause?: Error }).cause?.message ?? (err as Error).message);
  req.c.failureType = isCancellation(err) ? 'Cancelled' : err instanceof ApplicationFailure && err.type ? err.type : 'NodeCycleFailed';
  req.c.toCancel = req.activeNames();
  req.c.cancelled = req.activeNames();
  req.c.toHeal = req.inFlightNames();
  req.c.healMessage = message;
  req.c.step = 'Healing';
  req.phase('Healing', message);
}

export async function heal(req: Request): Promise<Next> {
  return CancellationScope.nonCancellable(async () => {
    if (!(await stopCycles(req))) return 'Healing';
    while (req.c.toHeal.length) {
      await healChunk(req, req.c.toHeal.slice(0, CHUNK));
      req.c.toHeal.splice(0, CHUNK);
      if (req.overBudget()) return 'Healing';
    }
    await act.releaseScaleDown.executeWithOptions({ summary: 'release scale-down protection' }, [{ requestKey: req.key }]);
    await releaseBudgetSlots(req); // all the request holds, waiting entries too
    await req.locks.release(); // only now: another request must not take the group mid-healing
    req.phase('Failed');
    req.st.completedAt = new Date().toISOString();
    return 'Failed';
  });
}

/** Cancels the running node cycles and waits (bounded) for them to stop. False: over budget, go on in the next run. */
export async function stopCycles(req: Request): Promise<boolean> {
  while (req.c.toCancel.length) {
    const chunk = req.c.toCancel.slice(0, CHUNK);
    await Promise.all(chunk.map((name) => getExternalWorkflowHandle(nodeCycleWorkflowId(req.selfId, name)).cancel().catch(() => undefined)));
    req.c.toCancel.splice(0, chunk.length);
    if (req.overBudget()) return false;
  }
  await condition(() => req.activeCount() === 0 || req.overBudget(), STOP_LIMIT_MS);
  return req.activeCount() === 0 || !req.overBudget();
}

export async function healChunk(req: Request, names: string[]): Promise<void> {
  const r = req.c.resolved;
  const nodes = names.filter((n) => req.isInFlight(n)).map((n) => req.node(n));
  if (r) {
    const heal = await act.healNodes.executeWithOptions({ summary: `heal ${nodes.length} nodes` }, [{ provider: r.provider, requestKey: req.key, nodes }]);
    if (heal.reattached.length) req.st.message = `${req.st.message}; re-attached ${fewNames(heal.reattached, 5)}`;
  }
  // healNodes uncordons before it drops the claim (NM-7.7).
  if (nodes.length) await releaseBudgetSlots(req, nodes.map((n) => n.name)); // uncordoned: no longer disrupted
  for (const n of nodes) {
    const phase = req.c.live[n.name]?.s.phase;
    if (phase !== 'Failed' || req.c.cancelled.includes(n.name)) req.mark(n.name, 'Failed', 'healed: back in its group, uncordoned');
    req.leave(n.name); // healed: it ends Failed, counted, in the journal
  }
}
