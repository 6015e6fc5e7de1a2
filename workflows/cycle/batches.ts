// Initialised: the next batch fills the free slots (never more than `concurrency` nodes in flight;
// it may have been lowered) with nodes that are claimed and have a NodeDisruptionBudget slot, or,
// with none left, the end once every node cycle is done. Nodes without a slot, and nodes a
// NodeMaintenance holds, wait here.
import { CancellationScope, isCancellation, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { WATCH_WINDOW_MS, watchSteps } from '../proxies.js';
import { NodesAttr, fitting } from '../search-attributes.js';
import { cycledMessage } from './node.js';
import { fewNames } from '../drain/status.js';
import type { Next, Request } from './request.js';
import { MAX_HELD } from './carry.js';
import { act } from './steps.js';
import { waitForCycles } from './cycling.js';

/** The budget and held-node waits: watches that answer on a change (issue 26), renewed in place. */
const watches = watchSteps('30 minutes');

export async function nextBatch(req: Request): Promise<Next> {
  req.checkFailure();
  if (!req.c.queue.length && !req.c.cursor.done) await req.refill(Math.max(1, req.c.concurrency - req.activeCount()));
  if (!req.c.queue.length && !req.c.held?.length) {
    if (!(await waitForCycles(req, () => req.activeCount() === 0))) return 'Initialised';
    return succeed(req);
  }
  if (req.activeCount() >= req.c.concurrency) {
    await waitForCycles(req, () => req.activeCount() < req.c.concurrency);
    return 'Initialised';
  }
  const nodes = await claimBatch(req, req.c.concurrency - req.activeCount());
  if (!nodes.length) return req.c.budgetWait ? waitForBudget(req) : waitForHeld(req);
  req.phase('Initialised', '');
  req.c.batch = { nodes, toCordon: [], toStart: [] };
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
  req.c.budgetRefused = undefined;
  const batch: string[] = [];
  for (;;) {
    if (batch.length >= free || (req.c.held?.length ?? 0) >= MAX_HELD) break;
    if (req.c.queue.length < free - batch.length) await req.refill(free - batch.length);
    if (!req.c.queue.length) break;
    let candidates = req.c.queue.splice(0, free - batch.length);
    candidates = await takeBudgetSlots(req, candidates);
    if (!candidates.length) break;
    const r = await act.claimNodes.executeWithOptions({ summary: `claim ${fewNames(candidates, 5)}` }, [{ requestKey: req.key, nodes: candidates }]);
    for (const name of r.gone) req.done(name, 'node was removed by someone else');
    for (const name of r.claimed) req.c.live[name]!.f = true;
    batch.push(...r.claimed);
    (req.c.held ??= []).push(...r.held);
    const notTaken = [...r.gone, ...r.held.map((h) => h.node)];
    if (notTaken.length) await releaseBudgetSlots(req, notTaken);
    if (req.c.budgetWait) break;
  }
  return batch;
}

/**
 * Issue 15: a node enters a batch only with a slot in every NodeDisruptionBudget that selects it
 * (taken before the detach, so no replacement is bought for a node that would then wait). Nodes
 * without room go back to the front of the queue, their reason in their status; the request
 * holds a slot from here until the node is deleted (its cycle releases it) or healed.
 */
export async function takeBudgetSlots(req: Request, candidates: string[]): Promise<string[]> {
  const r = await act.acquireDisruption.executeWithOptions({ summary: `disruption budget slots for ${fewNames(candidates, 5)}` }, [{ holder: req.selfId, nodes: candidates }]);
  if (r.waiting.length) {
    req.c.queue.unshift(...r.waiting.map((w) => w.node));
    req.c.budgetWait = r.waiting[0]!.reason;
    req.c.budgetRefused = r.waiting;
    for (const w of r.waiting) {
      const n = req.c.live[w.node]?.s;
      if (n && n.phase === 'Pending' && n.message !== w.reason) req.update(n, { message: w.reason });
    }
  }
  for (const name of r.granted) {
    const n = req.c.live[name]?.s;
    if (n && n.phase === 'Pending' && n.message?.startsWith('waiting for NodeDisruptionBudget')) req.update(n, { message: undefined });
  }
  return r.granted;
}

/** Gives back the budget slots of these nodes; without nodes, every slot and place in line the request holds (#28: by holder, no list). */
export async function releaseBudgetSlots(req: Request, nodes?: string[]): Promise<void> {
  const summary = nodes ? `release disruption budget slots of ${nodes.length} nodes` : 'release every disruption budget slot the request holds';
  await act.releaseDisruption.executeWithOptions({ summary }, [nodes ? { holder: req.selfId, nodes } : { holder: req.selfId }]);
}

/**
 * No node could take a budget slot: say why, and wait for the answer to change (the activity asks
 * the ledger on every budget change and keeps the request's place in the queue); a granted slot is
 * taken by the next batch (acquiring what one holds is granted). A node cycle that fails ends the wait.
 */
export async function waitForBudget(req: Request): Promise<Next> {
  if (req.c.budgetWait !== req.st.message) req.say(req.c.budgetWait!);
  const refused = req.c.budgetRefused ?? [];
  const refusals = Object.fromEntries(refused.map((w) => [w.node, w.reason]));
  const input = { holder: req.selfId, nodes: refused.map((w) => w.node), refusals, timeoutMs: WATCH_WINDOW_MS };
  const summary = `wait for a disruption budget slot: ${req.c.budgetWait}`;
  for (;;) {
    const r = await whileCycling(req, () => watches.waitForDisruption.executeWithOptions({ summary }, [input]));
    const same = r && !r.granted.length && r.waiting.every((w) => refusals[w.node] === w.reason);
    if (!same || !renew(req)) return 'Initialised';
  }
}

/**
 * NM-7.6: only nodes a NodeMaintenance holds are left (node cycles may still run): the request
 * stays in its phase, says whom it waits for, and waits until one of them is released or changes
 * hands (a watch of the held nodes), then claims again.
 */
export async function waitForHeld(req: Request): Promise<Next> {
  const held = req.c.held!;
  const h = held[0]!;
  const message = `waiting for NodeMaintenance ${h.maintenance} (${h.stage}) on node ${h.node}`;
  if (message !== req.st.message) req.say(message);
  const summary = `wait for NodeMaintenance to release ${held.length === 1 ? h.node : `${held.length} nodes`}`;
  for (;;) {
    const r = await whileCycling(req, () => watches.waitForHeldNodes.executeWithOptions({ summary }, [{ held, timeoutMs: WATCH_WINDOW_MS }]));
    if (!r || r.changed !== undefined || !renew(req)) break;
  }
  req.c.queue.unshift(...held.map((x) => x.node));
  req.c.held = [];
  return 'Initialised';
}

/** A window that ended with nothing changed is renewed in place, unless the run should continue as new first. */
const renew = (req: Request): boolean => !workflowInfo().continueAsNewSuggested && !req.overBudget();

/**
 * Runs a wait while the node cycles go on: a failed cycle, a scale-down release due, or a history
 * over budget is seen meanwhile (waitForCycles); the first two end it (undefined), the wait is then cancelled.
 */
async function whileCycling<T>(req: Request, wait: () => Promise<T>): Promise<T | undefined> {
  const scope = new CancellationScope();
  let answer: { v: T } | { err: unknown } | undefined;
  void scope.run(wait).then((v) => (answer = { v }), (err: unknown) => (answer = { err }));
  await waitForCycles(req, () => answer !== undefined);
  if (!answer) {
    scope.cancel();
    return undefined;
  }
  if ('err' in answer) {
    if (isCancellation(answer.err)) return undefined;
    throw answer.err;
  }
  return answer.v;
}

export async function succeed(req: Request): Promise<Next> {
  await releaseBudgetSlots(req); // anything a lost report left
  await req.locks.release();
  const r = req.c.returned;
  req.phase('Successful', cycledMessage(r.nodes, { cycled: req.st.nodesCycled, nodes: r.count, pods: r.pods }));
  req.st.completedAt = new Date().toISOString();
  return 'Successful';
}
