// Retargeting: T(N) from every covering holder (targets.ts); the node's drain (the drain engine in
// targets mode, ID nm-node/<node>/drain) gets them, started on first need.
import { ParentClosePolicy, WorkflowIdReusePolicy, getExternalWorkflowHandle, isCancellation, log, startChild, workflowInfo } from '@temporalio/workflow';
import { maintenanceDrainWorkflowId } from '../../ids.js';
import { drainTargetsSignal, type DrainTargets } from '../../messages.js';
import { steps } from '../../proxies.js';
import { drainWorkflow } from '../../drain/drain.js';
import { maintenanceRequester } from '../../../api/names.js';
import { fastForwardMessage, foldReached, sameLanes, updateTargets, type FastForward, type Holder } from '../targets.js';
import type { HolderInfo } from '../types.js';
import type { Coordinator } from '../node.js';
import { lanesText, maintenanceRef, reporting } from './report.js';

/** Targets to the drain, then reports to the holders. */
export async function advancing(c: Coordinator): Promise<void> {
  await retargeting(c);
  await reporting(c);
}

export async function retargeting(c: Coordinator): Promise<void> {
  if (c.gone || c.claimedBy) return; // once the cycle lets go, targets start as for a node that just joined (A5)
  const holders = [...c.holders.values()];
  // Issue 26 §5: what the drain reached by advances it applied itself comes first (it acted on them).
  const r = c.drainReport;
  const base = r?.reached && c.targets && r.targetsSeq === c.seq ? foldReached(c.targets, r.reached) : c.targets;
  const next = updateTargets(base, holders);
  c.targets = next.state;
  for (const f of next.fastForwarded) await fastForward(c, f);
  // NM-5.6: the drain's Evacuation requesters follow the maintenances that cover the node.
  const requesters = c.covering().map((h) => ({ name: maintenanceRequester(h.name), ...(h.reason ? { reason: h.reason } : {}) }));
  const requestersChanged = c.drainStarted && JSON.stringify(requesters) !== c.requestersSent;
  if (!next.changed && next.final === c.final && !requestersChanged && (c.drainStarted || !c.covering().length || c.drainFailed)) return;
  // Issue 26 §5: the drain works to these lanes already (it applied the advance itself): no new seq,
  // so the holders' reports at the current one stay good.
  const has = c.drainStarted && r?.targetsSeq === c.seq && r.lanes && sameLanes(r.lanes, next.state.lanes);
  if (has && next.final === c.final && !requestersChanged) return;
  c.final = next.final;
  if (!c.covering().length) return; // Cordon-stage holders only: no drain (A6); targets cleared by the planner
  c.seq++;
  // The holders and the state go with the lanes: the drain reports to them and applies their advances (handover.ts).
  const toHolder = ({ id, name, createdAt, stage, plan, index }: HolderInfo): Holder => ({ id, name, createdAt, stage, plan, index });
  const targets = { lanes: next.state.lanes, final: next.final, seq: c.seq, requesters, holders: holders.map(toHolder), state: next.state };
  c.requestersSent = JSON.stringify(requesters);
  if (!c.drainStarted) return startDrain(c, holders, targets);
  await getExternalWorkflowHandle(maintenanceDrainWorkflowId(c.node))
    .signal(drainTargetsSignal, targets)
    .catch((err: unknown) => {
      // The drain ended (Drained at final targets): start a new one for the new targets.
      log.info('drain not running; starting it again', { node: c.node, err: String(err) });
      c.drainStarted = false;
      c.seq--;
      c.dirty = true;
    });
}

async function startDrain(c: Coordinator, holders: HolderInfo[], targets: DrainTargets): Promise<void> {
  const first = holders.find((h) => h.stage === 'Drain');
  // The oldest draining maintenance is the requester of the Evacuations the drain joins (NM-5.1, 5.8).
  const requester = first ? { name: maintenanceRequester(first.name), ...(first.reason ? { reason: first.reason } : {}) } : undefined;
  const child = await startChild(drainWorkflow, {
    workflowId: maintenanceDrainWorkflowId(c.node),
    args: [{ nodeName: c.node, options: first?.drain, reportTo: workflowInfo().workflowId, targets, ...(requester ? { requester } : {}) }],
    // The drain outlives this run (continue-as-new) and reports to the coordinator's ID.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    staticSummary: `drain ${c.node} to ${lanesText(targets.lanes)}`,
  });
  c.drainStarted = true;
  c.drainFailed = undefined;
  c.recordonedSeen = 0; // a new drain counts from zero
  c.forcedSeen = 0; // and the last report's actions were the old drain's
  if (c.drainReport?.forced) c.drainReport = { ...c.drainReport, forced: undefined };
  // A drain that fails (podEvictionTimeout policy Fail, NM-7.4) ends; its holders are told, the node
  // stays cordoned, and new targets (or the next change) start a new drain.
  child.result().then(
    () => undefined,
    (err: unknown) => {
      if (isCancellation(err)) return;
      c.drainFailed = (err as { cause?: { message?: string } }).cause?.message ?? String(err);
      c.drainStarted = false;
      c.dirty = true;
    },
  );
}

async function fastForward(c: Coordinator, ff: FastForward): Promise<void> {
  const h = c.holders.get(ff.holder);
  if (!h) return;
  await steps.recordEvent.executeWithOptions({ summary: `event FastForwarded on ${h.name}` }, [
    { involved: maintenanceRef(h), type: 'Warning', reason: 'FastForwarded', message: fastForwardMessage(c.node, ff, h), dedupKey: `${h.id}/${c.node}/fast-forward` },
  ]);
}
