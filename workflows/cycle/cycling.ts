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

/** How long a batch's replacements may take to be Ready and healthy. */
const SCALE_UP_LIMIT_MS = 20 * 60_000;

export async function scaleUp(req: Request): Promise<Next> {
  const { spec } = req.input;
  const r = req.c.resolved!;
  const batch = req.c.batch.nodes;
  req.phase('ScalingUp', `detaching ${batch.join(', ')}`);
  const since = Date.now();
  req.c.inFlight.push(...batch.filter((n) => !req.isInFlight(n))); // claimed nodes are in flight already
  const d = await act.detachNodes.executeWithOptions({ summary: `detach ${batch.length} nodes` }, [{ provider: r.provider, requestKey: req.key, nodes: batch.map((n) => req.node(n)) }]);
  for (const name of d.gone) req.done(name, 'node was removed by someone else');
  const rep = await waits.waitForReplacements.executeWithOptions({ summary: `wait for ${d.detached.length} replacement nodes` }, [{
    provider: r.provider,
    groups: r.groups,
    selector: spec.selector,
    known: [...req.st.nodes.map((n) => n.nodeName), ...req.c.replacements],
    sinceMs: since,
    needed: d.detached.length,
    healthChecks: fill(spec.healthChecks ?? []),
    timeoutMs: SCALE_UP_LIMIT_MS,
  }]);
  if (!rep.ready) throw ApplicationFailure.nonRetryable(rep.message, 'ScaleUpFailed');
  req.c.replacements.push(...rep.newNodes);
  await act.protectFromScaleDown.executeWithOptions({ summary: 'disable scale-down of the new nodes' }, [{ nodes: rep.newNodes, requestKey: req.key }]);
  const live = batch.filter((n) => req.isInFlight(n));
  Object.assign(req.c.batch, { replacements: rep.newNodes, toCordon: live, toStart: [...live] });
  // A copy: cordoning consumes toCordon, and an emptied list would make the release due at once,
  // giving the new nodes back to cluster-autoscaler before the old were gone.
  req.c.releases.push({ nodes: [...live], newNodes: rep.newNodes });
  req.phase('CordoningNode', `replacements: ${rep.newNodes.join(', ')}`);
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
  const done = await waitForCycles(req, () => req.c.active.length <= half || (!req.c.queue.length && !req.c.active.length));
  req.checkFailure();
  return done ? 'Initialised' : 'WaitingTermination';
}

export async function startCycle(req: Request, n: GroupNode): Promise<void> {
  const r = req.c.resolved!;
  req.c.active.push(n.name);
  const child = await startChild(cycleNodeWorkflow, {
    workflowId: nodeCycleWorkflowId(req.selfId, n.name),
    args: [{ parentId: req.selfId, node: n, provider: r.provider, settings: r.settings, drain: req.input.spec.drain, requester: cycleRequester(req.input.request.namespace, req.input.request.name) }],
    // Outlives this run when it continues as new; reports its end to the request's workflow ID.
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  // This run also hears the child's result (the end report may be lost if the child is killed).
  child.result().then(
    (res) => {
      const cur = req.index.get(n.name);
      if (cur && res.returning && !cur.returning) req.touch(Object.assign(cur, { returning: res.returning }));
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

export function releaseDue(req: Request) {
  return req.c.releases.find((r) => r.nodes.every((name) => req.index.get(name)?.phase === 'Successful'));
}
