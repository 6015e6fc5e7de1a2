// The maintenance's nodes: which are selected, and registering with or releasing each node's
// coordinator (nm-node/<node>, node.ts), the only writer of that node.
import { WorkflowIdReusePolicy, ParentClosePolicy, getExternalWorkflowHandle, startChild, upsertSearchAttributes } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Selection } from '../../../activities/maintenance/select.js';
import type { NodeSelector } from '../../../api/node-maintenance.js';
import { maintenanceDrainWorkflowId, maintenanceEventRef, maintenanceNodeWorkflowId } from '../../ids.js';
import { tooManyMessage } from '../limit.js';
import { holderAdvancedSignal, registerHolderSignal, releaseHolderSignal } from '../../messages.js';
import { steps } from '../../proxies.js';
import { NodesAttr, fitting } from '../../search-attributes.js';
import { maintenanceNodeWorkflow } from '../node.js';
import type { HolderInfo } from '../types.js';
import type { Maintenance } from '../maintenance.js';
import { holds, indexOf } from '../rollout/engine.js';

export async function select(m: Maintenance): Promise<Selection> {
  const sel = await steps.selectMaintenanceNodes.executeWithOptions({ summary: 'select nodes' }, [{ nodeSelector: m.spec.nodeSelector as NodeSelector, ...rolloutAsk(m) }]);
  m.selectedTotal = sel.nodes.length;
  upsertSearchAttributes([{ key: NodesAttr, value: fitting(sel.nodes) }]);
  return sel;
}

/** A rolling maintenance asks each node's partition and who else holds it (RM-1.2, RM-1.5). */
export const rolloutAsk = (m: Maintenance) => (m.spec.rollout ? { partitionBy: m.spec.rollout.partitionBy ?? '', holder: m.name } : {});

/** Takes nodes that match now, releases those that stopped matching (a deleted node stays, reported gone). */
export async function syncMembership(m: Maintenance): Promise<void> {
  // Reports wake the loop often; the selection is read once per run, then the watch brings changes.
  const fresh = m.freshSelection;
  m.freshSelection = undefined;
  if (!fresh && m.selection) return;
  const sel = fresh ?? (await select(m));
  m.selection = sel;
  if (fresh) upsertSearchAttributes([{ key: NodesAttr, value: fitting(sel.nodes) }]);
  const now = new Set(sel.nodes);
  const selected = sel.nodes.filter((n) => !m.nodes.has(n));
  // #28: a selection that grew past the limit after admission: the nodes held stay, no more join.
  const staying = [...m.nodes].filter(([n, r]) => now.has(n) || r?.gone || r?.claimedBy).length;
  const joining = selected.slice(0, Math.max(0, (sel.maxNodes ?? Infinity) - staying));
  const leftOut = selected.length - joining.length;
  await noteLeftOut(m, sel, leftOut);
  for (const n of joining) m.nodes.set(n, undefined);
  await tellAll(m, joining);
  for (const [n, r] of m.nodes) {
    // A node a cycle claimed stays until its coordinator has seen the claim go or the node go (NM-7.7:
    // deleted by the cycle, it counts as finished); the cycle's detach may also drop it from the selection.
    if (now.has(n) || r?.gone || r?.claimedBy) continue;
    const held = holds(m, n); // a rolling maintenance holds only the nodes it has started
    m.nodes.delete(n);
    if (!held) continue;
    m.releasing.add(n);
    await release(m, n);
  }
}

/** Selected nodes left out by the limit: in status (the Ready condition) and, when their number changes, a Warning Event. */
async function noteLeftOut(m: Maintenance, sel: Selection, leftOut: number): Promise<void> {
  const before = m.tooMany?.leftOut;
  m.tooMany = leftOut > 0 ? { selected: sel.nodes.length, limit: sel.maxNodes ?? 0, leftOut } : undefined;
  if (!m.tooMany || before === leftOut) return;
  await steps.recordEvent.executeWithOptions({ summary: 'event TooManyNodes' }, [
    { involved: maintenanceEventRef(m), type: 'Warning', reason: 'TooManyNodes', message: `stage ${m.stage}: ${tooManyMessage(m.tooMany, m.stage)}`, dedupKey: `${m.id}/TooManyNodes/${m.stage}/${leftOut}` },
  ]);
}

/** M as node's coordinator sees it: a rolling node at its own plan position (RM-2.3). */
function holder(m: Maintenance, node: string): HolderInfo {
  return { id: m.id, name: m.name, createdAt: m.createdAt, stage: m.stage === 'Drain' ? 'Drain' : 'Cordon', plan: m.plan, index: indexOf(m, node), reason: m.reason, drain: m.spec.drain };
}

/** Tells many nodes at once: the signals go out together instead of one round trip each. */
export async function tellAll(m: Maintenance, nodes: string[]): Promise<void> {
  await Promise.all(nodes.filter((n) => holds(m, n)).map((n) => tell(m, n)));
}

/**
 * Registers (or updates) this maintenance with the node's coordinator, starting it if none runs.
 * Start-or-signal in a loop: a coordinator that ends between the two is started again.
 */
async function tell(m: Maintenance, node: string): Promise<void> {
  const id = maintenanceNodeWorkflowId(node);
  const h = holder(m, node);
  // A node this run has not told yet most often has no coordinator: try the start first then.
  let startFirst = !m.told.has(node);
  m.told.add(node);
  for (;;) {
    const signalled =
      !startFirst &&
      (await getExternalWorkflowHandle(id)
        .signal(registerHolderSignal, h)
        .then(() => true, () => false));
    startFirst = false;
    if (signalled) return;
    try {
      await startChild(maintenanceNodeWorkflow, {
        workflowId: id,
        args: [{ node, holders: [h] }],
        parentClosePolicy: ParentClosePolicy.ABANDON, // it serves every maintenance of the node, not only this one
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        staticSummary: `coordinator of node ${node}`,
      });
      return;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}

/** Issue 26 §5: M's new position to the drain of each node it covers (the drain applies it as the coordinator would). */
export async function tellDrains(m: Maintenance): Promise<void> {
  const covered = [...m.nodes].filter(([, r]) => r && !r.gone && !r.claimedBy && r.coveredBy.includes(m.name)).map(([n]) => n);
  await Promise.all(covered.map((n) => tellDrain(m, n)));
}

/** One node's drain hears M's position there (a rolling node's own, RM-2.3). */
export async function tellDrain(m: Maintenance, node: string): Promise<void> {
  const r = m.nodes.get(node);
  if (!r || r.gone || r.claimedBy || !r.coveredBy.includes(m.name)) return;
  await getExternalWorkflowHandle(maintenanceDrainWorkflowId(node)).signal(holderAdvancedSignal, { id: m.id, index: indexOf(m, node) }).catch(() => undefined);
}

export async function release(m: Maintenance, node: string): Promise<void> {
  const ok = await getExternalWorkflowHandle(maintenanceNodeWorkflowId(node))
    .signal(releaseHolderSignal, { id: m.id })
    .then(() => true, () => false);
  if (!ok) m.releasing.delete(node); // no coordinator: nothing is held there
}
