// Initialised: the next batch fills the free slots (never more than `concurrency` nodes in flight;
// it may have been lowered) with nodes that are claimed and have a NodeDisruptionBudget slot, or,
// with none left, the end once every node cycle is done. Nodes without a slot, and nodes a
// NodeMaintenance holds, wait here.
import { upsertSearchAttributes } from '@temporalio/workflow';
import { NodesAttr } from '../search-attributes.js';
import { cycledMessage } from './node.js';
import type { Next, Request } from './request.js';
import { act, fitting } from './steps.js';
import { waitForCycles } from './cycling.js';

/** How often a request whose next nodes have no NodeDisruptionBudget slot asks again. */
const BUDGET_RETRY_MS = 5_000;
/** Nodes held by a NodeMaintenance are tried again after 5 s, backing off to 30 s (NM-7.6). */
const heldRetryMs = (attempt: number) => Math.min(30_000, 5_000 * 2 ** Math.min(attempt, 3));

export async function nextBatch(req: Request): Promise<Next> {
  req.checkFailure();
  if (!req.c.queue.length && !req.c.held?.length) {
    if (!(await waitForCycles(req, () => req.c.active.length === 0))) return 'Initialised';
    return succeed(req);
  }
  if (req.c.active.length >= req.c.concurrency) {
    await waitForCycles(req, () => req.c.active.length < req.c.concurrency);
    return 'Initialised';
  }
  const nodes = await claimBatch(req, req.c.concurrency - req.c.active.length);
  if (!nodes.length) return req.c.budgetWait ? waitForBudget(req) : waitForHeld(req);
  req.phase('Initialised', '');
  req.c.batch = { nodes, replacements: [], toCordon: [], toStart: [] };
  upsertSearchAttributes([{ key: NodesAttr, value: fitting(nodes) }]);
  return 'ScalingUp';
}

/**
 * NM-7.5: the next `free` nodes of the queue that no NodeMaintenance holds, each claimed
 * (slipway.dev/cycled-by) before anything touches it; held nodes are set aside. A claimed node is
 * in flight: healing gives it back (claim removed, uncordoned).
 */
export async function claimBatch(req: Request, free: number): Promise<string[]> {
  req.c.budgetWait = undefined;
  const batch: string[] = [];
  while (batch.length < free && req.c.queue.length) {
    let candidates = req.c.queue.splice(0, free - batch.length);
    candidates = await takeBudgetSlots(req, candidates);
    if (!candidates.length) break;
    const r = await act.claimNodes.executeWithOptions({ summary: `claim ${candidates.join(', ')}` }, [{ requestKey: req.key, nodes: candidates }]);
    for (const name of r.gone) req.done(name, 'node was removed by someone else');
    req.c.inFlight.push(...r.claimed);
    batch.push(...r.claimed);
    (req.c.held ??= []).push(...r.held);
    const notTaken = [...r.gone, ...r.held.map((h) => h.node)];
    if (notTaken.length) await releaseBudgetSlots(req, notTaken);
    if (req.c.budgetWait) break;
  }
  if (batch.length) req.c.heldTries = 0;
  return batch;
}

/**
 * Issue 15: a node enters a batch only with a slot in every NodeDisruptionBudget that selects it
 * (taken before the detach, so no replacement is bought for a node that would then wait). Nodes
 * without room go back to the front of the queue, their reason in their status; the request
 * holds a slot from here until the node is deleted (its cycle releases it) or healed.
 */
export async function takeBudgetSlots(req: Request, candidates: string[]): Promise<string[]> {
  const r = await act.acquireDisruption.executeWithOptions({ summary: `disruption budget slots for ${candidates.join(', ')}` }, [{ holder: req.selfId, nodes: candidates }]);
  if (r.waiting.length) {
    req.c.queue.unshift(...r.waiting.map((w) => w.node));
    req.c.budgetWait = r.waiting[0]!.reason;
    for (const w of r.waiting) {
      const n = req.index.get(w.node);
      if (n && n.phase === 'Pending' && n.message !== w.reason) req.touch(Object.assign(n, { message: w.reason }));
    }
  }
  for (const name of r.granted) {
    const n = req.index.get(name);
    if (n && n.phase === 'Pending' && n.message?.startsWith('waiting for NodeDisruptionBudget')) req.touch(Object.assign(n, { message: undefined }));
  }
  return r.granted;
}

export async function releaseBudgetSlots(req: Request, nodes: string[]): Promise<void> {
  await act.releaseDisruption.executeWithOptions({ summary: `release disruption budget slots of ${nodes.length} nodes` }, [{ holder: req.selfId, nodes }]);
}

/** No node could take a budget slot: say why, look again in 5 s (a freed slot is taken in arrival order). */
export async function waitForBudget(req: Request): Promise<Next> {
  if (req.c.budgetWait !== req.st.message) req.say(req.c.budgetWait!);
  await waitForCycles(req, () => false, BUDGET_RETRY_MS);
  return 'Initialised';
}

/**
 * NM-7.6: only nodes a NodeMaintenance holds are left (node cycles may still run): the request
 * stays in its phase, says whom it waits for, and tries them again after 5 s, backing off to 30 s.
 */
export async function waitForHeld(req: Request): Promise<Next> {
  const h = req.c.held![0]!;
  const message = `waiting for NodeMaintenance ${h.maintenance} (${h.stage}) on node ${h.node}`;
  if (message !== req.st.message) req.say(message);
  const tries = req.c.heldTries ?? 0;
  req.c.heldTries = tries + 1;
  await waitForCycles(req, () => false, heldRetryMs(tries));
  req.c.queue.unshift(...req.c.held!.map((x) => x.node));
  req.c.held = [];
  return 'Initialised';
}

export async function succeed(req: Request): Promise<Next> {
  await releaseBudgetSlots(req, req.st.nodes.map((n) => n.nodeName)); // anything a lost report left
  await req.locks.release();
  req.countCycled();
  req.phase('Successful', cycledMessage(req.st.nodes));
  req.st.completedAt = new Date().toISOString();
  return 'Successful';
}
