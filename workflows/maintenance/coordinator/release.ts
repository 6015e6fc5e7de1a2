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
  if (c.drainStarted) {
    await getExternalWorkflowHandle(maintenanceDrainWorkflowId(c.node))
      .cancel()
      .catch(() => undefined); // already ended
    c.drainStarted = false;
  }
  c.targets = undefined;
  c.final = false;
  const letGo = releasesInEffect(c);
  const r = await steps.writeMaintenanceNodeState.executeWithOptions({ summary: `release ${c.node}` }, [{ node: c.node, holders: [] }]);
  c.written = undefined;
  c.gone = !r.exists;
  if (c.inLedger) {
    // Restored (uncordoned or left as it was found): no longer disrupted by us. Before the acks, so
    // a completed maintenance has given its slots back.
    await steps.releaseDisruption.executeWithOptions({ summary: `release the budget slot of ${c.node}` }, [{ holder: workflowInfo().workflowId, nodes: [c.node] }]);
    c.inLedger = false;
  }
  c.slot = false;
  c.budgetWait = undefined;
  await acknowledgeReleases(c, letGo);
}

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
