// One CycleNodeRequest: Pending → Initialised → ScalingUp → CordoningNode → WaitingTermination →
// (next batch) … → Successful, or Healing → Failed. Surge first: a batch is detached without
// shrinking its group, so replacements come up (Ready, healthy) before any old node is cordoned.
// Healing is a compensation that runs on any failure and on cancellation (the object was deleted):
// nodes not yet terminated go back into their group and are uncordoned, and scale-down protection
// is removed, so no node is ever left outside its group or cordoned.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CycleRequestPhase } from '../../api/cycle-node-request.js';
import { nodeGroupsOf } from '../../api/node-groups.js';
import type { CycleNode, ResolvedCycle } from '../../activities/cycle/resolve.js';
import { cycleStatusQuery, drainProgressSignal, nodeProgressSignal, specChangedUpdate } from '../messages.js';
import { immutableChanges } from './spec-change.js';
import { NodeGroupAttr, NodesAttr, PhaseAttr } from '../search-attributes.js';
import { acquireNodeGroupLocks, type HeldLocks } from './lock.js';
import { cycleNodeWorkflow } from './node.js';
import { nodeCycleWorkflowId, type CycleRequestInput, type CycleStatus } from './types.js';
import { longSteps, steps } from '../proxies.js';

const act = steps;
const waits = longSteps('30 minutes');

/** How long the cloud group and the cluster may disagree before the request fails. */
const EQUILIBRIUM_LIMIT_MS = 5 * 60_000;
/** How long a batch's replacements may take to be Ready and healthy. */
const SCALE_UP_LIMIT_MS = 20 * 60_000;

export async function cycleNodeRequestWorkflow(input: CycleRequestInput): Promise<CycleStatus> {
  const { request, spec } = input;
  const requestKey = `${request.namespace}/${request.name}/${request.uid}`;
  const selfId = workflowInfo().workflowId;
  const st: CycleStatus = { phase: 'Pending', message: '', nodes: [], nodesCycled: 0, nodesTotal: 0, startedAt: new Date().toISOString() };
  setHandler(cycleStatusQuery, () => st);
  setHandler(nodeProgressSignal, (n) => {
    const i = st.nodes.findIndex((x) => x.nodeName === n.nodeName);
    // Reports may arrive out of order, or after the child's result: keep the newest, never undo an end.
    const cur = st.nodes[i];
    const ended = (p: string) => p === 'Successful' || p === 'Failed';
    if (!cur || (n.seq !== undefined && cur.seq !== undefined && n.seq <= cur.seq) || (ended(cur.phase) && !ended(n.phase))) return;
    st.nodes[i] = { ...cur, ...n, drainMessage: n.phase === 'DrainingPods' ? cur.drainMessage : undefined };
    st.nodesCycled = st.nodes.filter((x) => x.phase === 'Successful').length;
    render();
  });
  setHandler(drainProgressSignal, (d) => {
    const n = st.nodes.find((x) => x.nodeName === d.nodeName);
    if (n) Object.assign(n, { drainMessage: d.message, evicted: d.evicted });
    render();
  });
  // Spec edits: only concurrency, taken by the next batch (nodes in flight keep cycling).
  let requested: number | 'all' | undefined;
  let concurrency = 0; // set once the nodes are resolved
  const effective = () => (requested === undefined ? concurrency : requested === 'all' ? Math.max(1, st.nodesTotal) : requested);
  setHandler(
    specChangedUpdate,
    ({ spec: next }) => {
      requested = next.cycleSettings?.concurrency ?? 'all';
      if (concurrency) concurrency = effective();
      st.concurrency = concurrency || undefined;
      render();
      return { concurrency: effective() };
    },
    {
      validator: ({ spec: next }) => {
        if (['Successful', 'Failed', 'Healing'].includes(st.phase)) throw new Error(`the cycle has ended (${st.phase}): spec changes no longer apply`);
        const changed = immutableChanges(spec, next);
        if (changed.length) throw new Error(`only spec.cycleSettings.concurrency may change while a cycle runs; changed: ${changed.map((c) => `spec.${c}`).join(', ')}`);
        const c = next.cycleSettings?.concurrency;
        if (c !== undefined && !(Number.isInteger(c) && c >= 1)) throw new Error(`spec.cycleSettings.concurrency must be a whole number ≥ 1, not ${c}`);
      },
    },
  );
  const render = () =>
    setCurrentDetails(
      [`**${request.namespace}/${request.name}**: ${st.phase} — ${st.nodesCycled}/${st.nodesTotal} nodes cycled`, st.message]
        .concat(st.nodes.map((n) => `- \`${n.nodeName}\` ${n.phase}${n.drainMessage && n.phase === 'DrainingPods' ? `: ${n.drainMessage.split('\n').slice(0, 3).join(' ')}` : ''}`))
        .filter(Boolean)
        .join('\n'),
    );
  const phase = (p: CycleRequestPhase, message = st.message) => {
    st.phase = p;
    st.message = message;
    upsertSearchAttributes([{ key: PhaseAttr, value: p }]);
    render();
  };
  const groups = nodeGroupsOf(spec);
  if (groups[0]) upsertSearchAttributes([{ key: NodeGroupAttr, value: groups[0] }]);
  render();

  let resolved: ResolvedCycle | undefined;
  /** Nodes detached from their group and not terminated yet: what healing must put back. */
  const inFlight = new Map<string, CycleNode>();
  let locks: HeldLocks | undefined;

  try {
    // Pending: validate, take the node groups, pick nodes, and wait (bounded) for the group and the
    // cluster to agree.
    let equilibriumDeadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
    for (;;) {
      resolved = await act.resolveCycle.executeWithOptions({ summary: `resolve node groups ${groups.join(', ')}` }, [{ spec, requestKey }]);
      if (resolved.errors.length) {
        // Invalid: nothing was touched, nothing to heal.
        phase('Failed', resolved.errors.join('; '));
        st.completedAt = new Date().toISOString();
        throw ApplicationFailure.nonRetryable(st.message, 'InvalidCycleRequest');
      }
      if (!locks) {
        // One request per node group at a time: two would fight over its capacity, and each would
        // read the other's detached instances as a disagreement. After a wait, pick nodes afresh.
        let waited = false;
        locks = await acquireNodeGroupLocks(resolved.provider, resolved.groups, (group, lockId) => {
          waited = true;
          phase('Pending', `waiting for node group ${group}: another request is cycling it (lock ${lockId})`);
        });
        equilibriumDeadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
        if (waited) {
          phase('Pending', '');
          continue;
        }
      }
      const { nodesWithoutInstance, instancesWithoutNode } = resolved.mismatch;
      if (!nodesWithoutInstance.length && !instancesWithoutNode.length) break;
      const disagreement = `node group and cluster disagree: nodes without an instance [${nodesWithoutInstance.join(', ')}], instances without a node [${instancesWithoutNode.join(', ')}]`;
      if (Date.now() >= equilibriumDeadline) throw ApplicationFailure.nonRetryable(disagreement, 'NoEquilibrium');
      phase('Pending', `${disagreement}; waiting`);
      await sleep('5 seconds');
    }
    const r = resolved;
    st.nodes = r.nodes.map((n) => ({ nodeName: n.name, phase: 'Pending', providerID: n.providerID, nodeGroup: n.nodeGroup }));
    st.nodesTotal = r.nodes.length;
    phase('Pending', r.warnings.join('; '));
    if (spec.healthChecks?.length && !spec.skipInitialHealthChecks) {
      const h = await waits.healthCheckNodes.executeWithOptions({ summary: `initial health checks on ${r.nodes.length} nodes` }, [
        { nodes: r.nodes, checks: fill(spec.healthChecks), maxWaitMs: 0 },
      ]);
      if (!h.passed) throw ApplicationFailure.nonRetryable(`initial health checks failed: ${h.failures.join('; ')}`, 'HealthCheckFailed');
    }

    const queue = [...r.nodes];
    const known = new Set(r.nodes.map((n) => n.name));
    // Node cycles run in one scope, so a failure stops the others before healing.
    const children = new CancellationScope();
    const active = new Map<string, Promise<void>>();
    const batches: Array<Promise<unknown>> = [];
    let failure: string | undefined;
    concurrency = r.settings.concurrency;
    concurrency = effective(); // an edit that arrived while Pending wins
    st.concurrency = concurrency;
    while (queue.length && failure === undefined) {
      // Fill the free slots: never more than `concurrency` nodes in flight (it may have been lowered).
      if (active.size >= concurrency) {
        await condition(() => failure !== undefined || active.size < concurrency);
        continue;
      }
      phase('Initialised', '');
      const batch = queue.splice(0, concurrency - active.size);
      upsertSearchAttributes([{ key: NodesAttr, value: batch.map((n) => n.name) }]);

      // ScalingUp: detach (the group replaces), then wait for Ready, healthy replacements.
      phase('ScalingUp', `detaching ${batch.map((n) => n.name).join(', ')}`);
      const since = Date.now();
      for (const n of batch) inFlight.set(n.name, n);
      const d = await act.detachNodes.executeWithOptions({ summary: `detach ${batch.length} nodes` }, [{ provider: r.provider, requestKey, nodes: batch }]);
      for (const name of d.gone) {
        inFlight.delete(name);
        markNode(st, name, 'Successful', 'node was removed by someone else');
      }
      const rep = await waits.waitForReplacements.executeWithOptions({ summary: `wait for ${d.detached.length} replacement nodes` }, [
        {
          provider: r.provider,
          groups: r.groups,
          selector: spec.selector,
          known: [...known],
          sinceMs: since,
          needed: d.detached.length,
          healthChecks: fill(spec.healthChecks ?? []),
          timeoutMs: SCALE_UP_LIMIT_MS,
        },
      ]);
      if (!rep.ready) throw ApplicationFailure.nonRetryable(rep.message, 'ScaleUpFailed');
      for (const n of rep.newNodes) known.add(n);
      await act.protectFromScaleDown.executeWithOptions({ summary: 'disable scale-down of the new nodes' }, [{ nodes: rep.newNodes, requestKey }]);

      // CordoningNode: cordon the batch, then the pre-termination checks.
      phase('CordoningNode', `replacements: ${rep.newNodes.join(', ')}`);
      const live = batch.filter((n) => inFlight.has(n.name));
      // The batch's nodes are independent: cordon and check them in parallel.
      await Promise.all(
        live.map(async (n) => {
          await act.cordonNode.executeWithOptions({ summary: `cordon ${n.name}` }, [n.name]);
          if (spec.preTerminationChecks?.length && !spec.skipPreTerminationChecks) {
            const c = await waits.preTerminationChecks.executeWithOptions({ summary: `pre-termination checks on ${n.name}` }, [
              { node: n, checks: spec.preTerminationChecks.map((p) => ({ ...p, validStatusCodes: p.validStatusCodes ?? [200], healthCheck: fill([p.healthCheck])[0]! })) },
            ]);
            if (!c.passed) throw ApplicationFailure.nonRetryable(`pre-termination checks failed on ${n.name}: ${c.failures.join('; ')}`, 'PreTerminationCheckFailed');
          }
        }),
      );

      // WaitingTermination: one child per node (drain, delete, terminate), running on while the
      // next batch scales up (Cyclops: the next batch starts once at most concurrency/2 are active).
      phase('WaitingTermination', `${live.length + active.size} nodes draining`);
      const cycles = live.map((n) => {
        const p = children
          .run(() =>
            executeChild(cycleNodeWorkflow, {
              workflowId: nodeCycleWorkflowId(selfId, n.name),
              args: [{ parentId: selfId, node: n, provider: r.provider, settings: r.settings, drain: spec.drain }],
            }),
          )
          .then(
            (res) => {
              inFlight.delete(n.name);
              markNode(st, n.name, 'Successful', res.message);
            },
            (err: Error & { cause?: Error }) => {
              failure ??= err.cause?.message ?? err.message;
            },
          )
          .finally(() => active.delete(n.name));
        active.set(n.name, p);
        return p;
      });
      // Let cluster-autoscaler manage this batch's new nodes again once its old nodes are gone (#142).
      batches.push(
        Promise.all(cycles).then(() =>
          failure === undefined ? act.releaseScaleDown.executeWithOptions({ summary: 'release scale-down protection' }, [{ requestKey, nodes: rep.newNodes }]) : undefined,
        ),
      );
      await condition(() => failure !== undefined || active.size <= Math.floor(concurrency / 2) || (queue.length === 0 && active.size === 0));
    }
    await condition(() => failure !== undefined || active.size === 0);
    if (failure !== undefined) {
      children.cancel();
      await Promise.allSettled([...active.values()]);
      throw ApplicationFailure.nonRetryable(`node cycle failed: ${failure}`, 'NodeCycleFailed');
    }
    await Promise.all(batches);
    await locks.release();
    st.nodesCycled = st.nodes.filter((x) => x.phase === 'Successful').length;
    phase('Successful', `${st.nodesCycled} ${st.nodesCycled === 1 ? 'node' : 'nodes'} cycled`);
    st.completedAt = new Date().toISOString();
    return st;
  } catch (err) {
    if (st.phase === 'Failed') throw err; // invalid request: nothing to heal
    const message = isCancellation(err) ? 'cancelled (the request was deleted)' : ((err as Error & { cause?: Error }).cause?.message ?? (err as Error).message);
    // Compensations run even when the workflow itself is being cancelled.
    await CancellationScope.nonCancellable(async () => {
      phase('Healing', message);
      if (resolved) {
        const heal = await act.healNodes.executeWithOptions({ summary: `heal ${inFlight.size} nodes` }, [
          { provider: resolved.provider, requestKey, nodes: [...inFlight.values()] },
        ]);
        for (const name of inFlight.keys()) if (st.nodes.find((x) => x.nodeName === name)?.phase !== 'Failed') markNode(st, name, 'Failed', 'healed: back in its group, uncordoned');
        if (heal.reattached.length) st.message = `${message}; re-attached ${heal.reattached.join(', ')}`;
      }
      await act.releaseScaleDown.executeWithOptions({ summary: 'release scale-down protection' }, [{ requestKey }]);
      await locks?.release(); // only now: another request must not take the group mid-healing
      phase('Failed');
      st.completedAt = new Date().toISOString();
    });
    throw err;
  }
}

function markNode(st: CycleStatus, name: string, phase: 'Successful' | 'Failed', message?: string) {
  const n = st.nodes.find((x) => x.nodeName === name);
  if (n) Object.assign(n, { phase, message });
  st.nodesCycled = st.nodes.filter((x) => x.phase === 'Successful').length;
}

/** Defaults the CRD leaves to us (validStatusCodes). */
function fill<T extends { validStatusCodes?: number[] }>(checks: T[]): Array<T & { validStatusCodes: number[] }> {
  return checks.map((c) => ({ ...c, validStatusCodes: c.validStatusCodes?.length ? c.validStatusCodes : [200] }));
}
