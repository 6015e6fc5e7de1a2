// Releasing: nobody holds the node: stop the drain, restore the node, give the budget slot back,
// tell the releasers. A release while others hold the node is acknowledged after the next write.
import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { maintenanceDrainWorkflowId } from '../../ids.js';
import { nodeReportSignal } from '../../messages.js';
import { steps } from '../../proxies.js';
import { NO_COUNTS, type NodeReport } from '../types.js';
import type { Coordinator } from '../node.js';
import { stopSlotWait } from './budget.js';
import { stopLook } from './hold.js';

export async function releasing(c: Coordinator): Promise<void> {
  stopLook(c);
  stopSlotWait(c);
  // #27 hand-over: a drain that may still act on the node (it re-cordons an uncordoned node) is
  // cancelled before the restoring write; one done with it (drained at final targets: it ends) is
  // cancelled beside the write, which saves a workflow task.
  const cancel = c.drainStarted ? cancelDrain(c) : undefined;
  if (cancel && !drainDone(c)) await cancel;
  c.drainStarted = false;
  c.targets = undefined;
  c.final = false;
  const letGo = releasesInEffect(c);
  // Restored (uncordoned or left as it was found), then no longer disrupted by us: the slot goes back
  // in the same activity, after the write and before the acks, so a completed maintenance (or the
  // rollout's next node) finds it free.
  const slot = c.inLedger ? { slot: { holder: workflowInfo().workflowId } } : {};
  const [r] = await Promise.all([steps.writeMaintenanceNodeState.executeWithOptions({ summary: `release ${c.node}` }, [{ node: c.node, holders: [], ...slot }]), cancel]);
  c.written = undefined;
  c.gone = !r.exists;
  c.inLedger = false;
  c.slot = false;
  c.budgetWait = undefined;
  await acknowledgeReleases(c, letGo);
}

const cancelDrain = (c: Coordinator): Promise<void> =>
  getExternalWorkflowHandle(maintenanceDrainWorkflowId(c.node))
    .cancel()
    .catch(() => undefined); // already ended

/** The drain reported itself drained at the final targets it was last sent: it has ended, or is ending without acting again. */
const drainDone = (c: Coordinator): boolean => c.final && !!c.drainReport?.drained && c.drainReport.targetsSeq === c.seq;

/** The releases the next write of the node carries out (taken just before it). */
export function releasesInEffect(c: Coordinator): string[] {
  return [...c.released];
}

/**
 * Tells each maintenance that let go of the node that its release is done, once a write made
 * without it has landed: only those released before that write, and not registered again since.
 */
export async function acknowledgeReleases(c: Coordinator, letGo: string[]): Promise<void> {
  const released = letGo.filter((id) => c.released.has(id));
  for (const id of released) c.released.delete(id);
  const ack: Omit<NodeReport, 'seq'> = { node: c.node, lanes: [], finished: true, drained: false, gone: c.gone, released: true, counts: NO_COUNTS, coveredBy: [], limitedBy: [], blockers: '' };
  await Promise.all(released.map((id) => getExternalWorkflowHandle(id).signal(nodeReportSignal, { ...ack, seq: c.seq }).catch(() => undefined)));
}
