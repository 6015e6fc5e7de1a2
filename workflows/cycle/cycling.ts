// A batch's steps. ScalingUp: detach (the group replaces), then wait for Ready, healthy
// replacements. CordoningNode: cordon the batch, then the pre-termination checks (nodes in
// parallel, a chunk at a time). WaitingTermination: one child per node (drain, delete, terminate),
// running on while the next batch scales up (Cyclops: the next batch starts once at most
// concurrency/2 are active).
import { ApplicationFailure, ParentClosePolicy, condition, startChild } from '@temporalio/workflow';
import type { GroupNode } from '../../activities/cycle/resolve.js';
import { cycleRequester } from '../../api/names.js';
import { cycleNodeWorkflow } from './node.js';
import { nodeCycleWorkflowId } from './types.js';
import type { Next, Request } from './request.js';
import { act, CHUNK, fill, waits } from './steps.js';
import { fewNames } from '../drain/status.js';

/** How long a batch's replacements may take to be Ready and healthy. */
const SCALE_UP_LIMIT_MS = 20 * 60_000;

export async function scaleUp(req: Request): Promise<Next> {
  const { spec } = req.input;
  const r = req.c.resolved!;
  const batch = req.c.batch.nodes;
  req.phase('ScalingUp', `detaching ${fewNames(batch, 5)}`);
  const since = Date.now();
  for (const n of batch) req.c.live[n]!.f = true; // claimed nodes are in flight already
  const d = await act.detachNodes.executeWithOptions({ summary: `detach ${batch.length} nodes` }, [{ provider: r.provider, requestKey: req.key, nodes: batch.map((n) => req.node(n)) }]);
  for (const name of d.gone) req.done(name, 'node was removed by someone else');
  const rep = await waits.waitForReplacements.executeWithOptions({ summary: `wait for ${d.detached.length} replacement nodes` }, [{
    provider: r.provider,
    groups: r.groups,
    selector: spec.selector,
    // #28: no list of the fleet: a replacement is a node created after the batch began; only the
    // batch's own nodes and the last batches' replacements (created about then) are named.
    exclude: [...batch, ...req.c.recent, ...req.c.releases.flatMap((x) => x.newNodes)],
    sinceMs: since,
    needed: d.detached.length,
    healthChecks: fill(spec.healthChecks ?? []),
    timeoutMs: SCALE_UP_LIMIT_MS,
  }]);
  if (!rep.ready) throw ApplicationFailure.nonRetryable(rep.message, 'ScaleUpFailed');
  req.c.recent = rep.newNodes;
  await act.protectFromScaleDown.executeWithOptions({ summary: 'disable scale-down of the new nodes' }, [{ nodes: rep.newNodes, requestKey: req.key }]);
  const live = batch.filter((n) => req.isInFlight(n));
  // The batch's names are no longer needed once its steps are lists of their own (the carry stays small).
  Object.assign(req.c.batch, { nodes: [], toCordon: live, toStart: [...live] });
  // The release is due once every node marked with its id is cycled: not when cordoning or the
  // next batch starts, which would give the new nodes back to cluster-autoscaler before the old were gone.
  const id = (req.c.releases.at(-1)?.id ?? 0) + 1;
  for (const n of live) req.c.live[n]!.r = id;
  req.c.releases.push({ id, newNodes: rep.newNodes });
  req.phase('CordoningNode', `replacements: ${fewNames(rep.newNodes, 5)}`);
  return 'CordoningNode';
}

// ---- CordoningNode: cordon the batch, then the pre-termination checks (nodes in parallel, a chunk at a time).
export async function cordonBatch(req: Request): Promise<Next> {
  const { spec } = req.input;
  const checks = spec.preTerminationChecks?.length && !spec.skipPreTerminationChecks ? spec.preTerminationChecks : [];
  while (req.c.batch.toCordon.length) {
    const chunk = req.c.batch.toCordon.slice(0, CHUNK).map((name) => req.node(name));
    await Promise.all(
      chunk.map(async (n) => {
        await act.cordonNode.executeWithOptions({ summary: `cordon ${n.name}` }, [n.name]);
        if (!checks.length) return;
        const c = await waits.preTerminationChecks.executeWithOptions({ summary: `pre-termination checks on ${n.name}` }, [
          { node: n, checks: checks.map((p) => ({ ...p, validStatusCodes: p.validStatusCodes ?? [200], healthCheck: fill([p.healthCheck])[0]! })) },
        ]);
        if (!c.passed) throw ApplicationFailure.nonRetryable(`pre-termination checks failed on ${n.name}: ${c.failures.join('; ')}`, 'PreTerminationCheckFailed');
      }),
    );
    req.c.batch.toCordon.splice(0, chunk.length);
    if (req.overBudget()) return 'CordoningNode';
  }
  const { toStart } = req.c.batch;
  req.phase('WaitingTermination', req.drainingMessage());
  return 'WaitingTermination';
}

// ---- WaitingTermination: one child per node (drain, delete, terminate), running on while the
// next batch scales up (Cyclops: the next batch starts once at most concurrency/2 are active).
export async function startCycles(req: Request): Promise<Next> {
  const { batch } = req.c;
  while (batch.toStart.length) {
    req.checkFailure();
    const chunk = batch.toStart.slice(0, CHUNK);
    await Promise.all(chunk.map((name) => startCycle(req, req.node(name))));
    batch.toStart.splice(0, chunk.length);
    if (req.overBudget()) return 'WaitingTermination';
  }
  const half = Math.floor(req.c.concurrency / 2);
  const done = await waitForCycles(req, () => req.activeCount() <= half || (!req.c.queue.length && req.c.cursor.done && !req.activeCount()));
  req.checkFailure();
  return done ? 'Initialised' : 'WaitingTermination';
}

export async function startCycle(req: Request, n: GroupNode): Promise<void> {
  const r = req.c.resolved!;
  req.c.live[n.name]!.a = true;
  const child = await startChild(cycleNodeWorkflow, {
    workflowId: nodeCycleWorkflowId(req.selfId, n.name),
    args: [{ parentId: req.selfId, node: n, provider: r.provider, settings: r.settings, drain: req.input.spec.drain, requester: cycleRequester(req.input.request.namespace, req.input.request.name) }],
    // Outlives this run when it continues as new; reports its end to the request's workflow ID.
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  // This run also hears the child's result (the end report may be lost if the child is killed).
  child.result().then(
    (res) => {
      const cur = req.statusOf(n.name);
      if (cur && res.returning && !cur.returning) req.update(cur, { returning: res.returning });
      req.nodeCycled(n.name, res.message);
    },
    (err: Error & { cause?: Error }) => req.nodeFailed(n.name, err.cause?.message ?? err.message),
  );
}

/**
 * Waits until `done`, a node cycle failed, or the history is over budget (false). Meanwhile it lets
 * cluster-autoscaler manage a batch's new nodes again once the batch's old nodes are gone (#142).
 */
export async function waitForCycles(req: Request, done: () => boolean, timeoutMs?: number): Promise<boolean> {
  for (;;) {
    const woke = () => done() || releaseDue(req) !== undefined || req.c.failure !== undefined || req.overBudget();
    if (timeoutMs === undefined) await condition(woke);
    else if (!(await condition(woke, timeoutMs))) return false;
    const due = releaseDue(req);
    if (due && req.c.failure === undefined) {
      await act.releaseScaleDown.executeWithOptions({ summary: 'release scale-down protection' }, [{ requestKey: req.key, nodes: due.newNodes }]);
      req.c.releases.splice(req.c.releases.indexOf(due), 1);
      continue;
    }
    return req.c.failure === undefined && done();
  }
}

/** A release whose nodes are all cycled (a cycled node has left the live set; a failed one stays until healed). */
export function releaseDue(req: Request) {
  if (!req.c.releases.length) return undefined;
  const waiting = new Set<number>();
  for (const l of req.liveNodes()) if (l.r !== undefined && l.s.phase !== 'Successful') waiting.add(l.r);
  return req.c.releases.find((r) => !waiting.has(r.id));
}
