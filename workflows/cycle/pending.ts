// Pending: validate, take the node groups, pick the nodes, wait (bounded) for the group and the
// cluster to agree, then the initial health checks.
import { ApplicationFailure, sleep } from '@temporalio/workflow';
import { nodeGroupsOf } from '../../api/node-groups.js';
import { allAtOnce } from '../../api/names.js';
import type { GroupNode, ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { Next, Request } from './request.js';
import { act, fill, waits } from './steps.js';

/** How long the cloud group and the cluster may disagree before the request fails. */
const EQUILIBRIUM_LIMIT_MS = 5 * 60_000;

export async function pending(req: Request): Promise<Next> {
  const { spec } = req.input;
  const groups = nodeGroupsOf(spec);
  let deadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
  for (;;) {
    const resolved = await act.resolveCycle.executeWithOptions({ summary: `resolve node groups ${groups.join(', ')}` }, [{ spec, requestKey: req.key }]);
    if (resolved.errors.length) return invalid(req, resolved.errors.join('; ')); // nothing touched, nothing to heal but the locks
    const { nodes, ...rest } = resolved;
    req.c.resolved = rest;
    if (await takeLocks(req, rest)) {
      deadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
      continue; // after a wait, pick nodes afresh
    }
    const { nodesWithoutInstance, instancesWithoutNode } = resolved.mismatch;
    if (!nodesWithoutInstance.length && !instancesWithoutNode.length) return selected(req, nodes, rest);
    const disagreement = `node group and cluster disagree: nodes without an instance [${nodesWithoutInstance.join(', ')}], instances without a node [${instancesWithoutNode.join(', ')}]`;
    if (Date.now() >= deadline) throw ApplicationFailure.nonRetryable(disagreement, 'NoEquilibrium');
    req.phase('Pending', `${disagreement}; waiting`);
    await sleep('5 seconds');
  }
}

/**
 * One request per node group at a time: two would fight over its capacity, and each would read the
 * other's detached instances as a disagreement. True when it had to wait.
 */
export async function takeLocks(req: Request, r: Omit<ResolvedCycle, 'nodes'>): Promise<boolean> {
  if (req.c.locks.length) return false;
  let waited = false;
  await req.locks.acquire(r.provider, r.groups, (group, lockId) => {
    waited = true;
    req.phase('Pending', `waiting for node group ${group}: another request is cycling it (lock ${lockId})`);
  }, req.input.lockProbeMs);
  if (waited) req.phase('Pending', '');
  return waited;
}

export async function selected(req: Request, nodes: GroupNode[], r: Omit<ResolvedCycle, 'nodes'>): Promise<Next> {
  const { spec } = req.input;
  req.st.nodes = nodes.map((n) => ({ nodeName: n.name, phase: 'Pending', providerID: n.providerID, nodeGroup: n.nodeGroup }));
  for (const n of req.st.nodes) {
    req.index.set(n.nodeName, n);
    req.touch(n);
  }
  req.st.nodesTotal = nodes.length;
  req.c.nodes = Object.fromEntries(nodes.map((n) => [n.name, n]));
  req.c.queue = nodes.map((n) => n.name);
  req.phase('Pending', r.warnings.join('; '));
  if (spec.healthChecks?.length && !spec.skipInitialHealthChecks) {
    const h = await waits.healthCheckNodes.executeWithOptions({ summary: `initial health checks on ${nodes.length} nodes` }, [
      { nodes, checks: fill(spec.healthChecks), maxWaitMs: 0 },
    ]);
    if (!h.passed) throw ApplicationFailure.nonRetryable(`initial health checks failed: ${h.failures.join('; ')}`, 'HealthCheckFailed');
  }
  req.c.concurrency = spec.cycleSettings?.concurrency === undefined ? Math.min(r.settings.concurrency, allAtOnce(nodes.length)) : r.settings.concurrency;
  req.c.concurrency = req.effective(); // an edit that arrived while Pending wins
  req.st.concurrency = req.c.concurrency;
  return 'Initialised';
}

export async function invalid(req: Request, message: string): Promise<never> {
  await req.locks.release();
  req.phase('Failed', message);
  req.st.completedAt = new Date().toISOString();
  throw ApplicationFailure.nonRetryable(message, 'InvalidCycleRequest');
}
