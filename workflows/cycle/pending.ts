// Pending: validate, take the node groups, pick the nodes, wait (bounded) for the group and the
// cluster to agree, then the initial health checks.
import { ApplicationFailure, sleep } from '@temporalio/workflow';
import { nodeGroupsOf } from '../../api/node-groups.js';
import { allAtOnce } from '../../api/names.js';
import type { ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { Next, Request } from './request.js';
import { act, fill, waits } from './steps.js';
import { NODES_PAGE } from './view.js';

/** How long the cloud group and the cluster may disagree before the request fails. */
const EQUILIBRIUM_LIMIT_MS = 5 * 60_000;

export async function pending(req: Request): Promise<Next> {
  const { spec } = req.input;
  const groups = nodeGroupsOf(spec);
  let deadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
  for (;;) {
    // The first page: as many nodes as the first batch may take (#28: the rest by nextNodes, as batches need them).
    const limit = Math.min(NODES_PAGE, spec.cycleSettings?.concurrency ?? NODES_PAGE);
    const resolved = await act.resolveCycle.executeWithOptions({ summary: `resolve node groups ${groups.join(', ')}` }, [{ spec, requestKey: req.key, limit }]);
    if (resolved.errors.length) return invalid(req, resolved.errors.join('; ')); // nothing touched, nothing to heal but the locks
    const { provider, groups: resolvedGroups, settings, resolvedAtMs } = resolved;
    req.c.resolved = { provider, groups: resolvedGroups, settings, resolvedAtMs };
    if (await takeLocks(req, resolved)) {
      deadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
      continue; // after a wait, pick nodes afresh
    }
    const m = resolved.mismatch;
    if (!m.nodesWithoutInstanceCount && !m.instancesWithoutNodeCount) return selected(req, resolved, limit);
    const named = (names: string[], count: number) => `[${names.join(', ')}${count > names.length ? ` and ${count - names.length} more` : ''}]`;
    const disagreement = `node group and cluster disagree: nodes without an instance ${named(m.nodesWithoutInstance, m.nodesWithoutInstanceCount)}, instances without a node ${named(m.instancesWithoutNode, m.instancesWithoutNodeCount)}`;
    if (Date.now() >= deadline) throw ApplicationFailure.nonRetryable(disagreement, 'NoEquilibrium');
    req.phase('Pending', `${disagreement}; waiting`);
    await sleep('5 seconds');
  }
}

/**
 * One request per node group at a time: two would fight over its capacity, and each would read the
 * other's detached instances as a disagreement. True when it had to wait.
 */
export async function takeLocks(req: Request, r: Pick<ResolvedCycle, 'provider' | 'groups'>): Promise<boolean> {
  if (req.c.locks.length) return false;
  let waited = false;
  await req.locks.acquire(r.provider, r.groups, (group, lockId) => {
    waited = true;
    req.phase('Pending', `waiting for node group ${group}: another request is cycling it (lock ${lockId})`);
  }, req.input.lockProbeMs);
  if (waited) req.phase('Pending', '');
  return waited;
}

/** The selection: its count, its first page taken; the initial health checks over all of it (paged by the activity). */
export async function selected(req: Request, r: ResolvedCycle, limit: number): Promise<Next> {
  const { spec } = req.input;
  req.st.nodesTotal = r.nodesTotal;
  req.counts().Pending = r.nodesTotal;
  req.take(r.nodes, limit);
  req.phase('Pending', r.warnings.join('; '));
  if (spec.healthChecks?.length && !spec.skipInitialHealthChecks) {
    const h = await waits.healthCheckSelection.executeWithOptions({ summary: `initial health checks on ${r.nodesTotal} nodes` }, [
      { spec, resolvedAtMs: r.resolvedAtMs, checks: fill(spec.healthChecks), maxWaitMs: 0 },
    ]);
    if (!h.passed) throw ApplicationFailure.nonRetryable(`initial health checks failed: ${h.failures.join('; ')}`, 'HealthCheckFailed');
  }
  req.c.concurrency = spec.cycleSettings?.concurrency === undefined ? Math.min(r.settings.concurrency, allAtOnce(r.nodesTotal)) : r.settings.concurrency;
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
