// Cordon and Drain: hold the selected nodes; in Drain, advance through the plan (A3). Membership is
// live (NM-2.6): a watch of the selection, not a poll, brings the changes.
import { CancellationScope, condition } from '@temporalio/workflow';
import type { Selection } from '../../../activities/maintenance/select.js';
import type { NodeSelector } from '../../../api/node-maintenance.js';
import { maintenanceEventRef } from '../../ids.js';
import { steps, watchSteps } from '../../proxies.js';
import { advance as nextIndex } from '../progress.js';
import { progressNodes } from '../status.js';
import type { Maintenance, Next } from '../maintenance.js';
import { rolloutAsk, select, syncMembership, tellAll, tellDrains } from './members.js';
import { roll } from '../rollout/engine.js';
import { checkCannotFinish } from '../cannot-finish.js';
import { overLimit, tooManyMessage } from '../limit.js';

/** The selection watch returns at the latest after 20 minutes (RENEW_MS). */
const waits = watchSteps('30 minutes');

export async function holding(m: Maintenance, stage: 'Cordon' | 'Drain'): Promise<Next> {
  if (!m.admitted && !(await admitSelection(m))) return m.desired === stage ? 'Complete' : m.desired;
  m.admitted = true;
  await checkCannotFinish(m, m.selection?.nodes ?? [...m.nodes.keys()]); // before any node waits for a slot
  // NM-2.3: the finalizer is on the object before the first Node write.
  if (!(await steps.ensureMaintenanceFinalizer.executeWithOptions({ summary: 'add finalizer' }, [{ name: m.name, uid: m.uid }]))) {
    m.deleting = true;
    return 'Complete';
  }
  await tellAll(m, [...m.nodes.keys()]); // the stage changed for nodes already held
  for (;;) {
    // Cleared before the pass, not after: a message or an answer that lands while the pass awaits a
    // step (a report, a rollout's completion watch) wakes the next pass instead of being lost.
    m.dirty = false;
    await syncMembership(m);
    if (stage === 'Drain') await (m.spec.rollout ? roll(m) : advance(m)); // a rollout: node by node (docs/rolling-maintenance.md)
    m.publish();
    if (m.desired !== stage) return m.desired;
    watchSelection(m);
    await condition(() => m.dirty);
    await m.renewIfLong();
  }
}

/** A3: move on while every node has reached and finished the current entry; tell the nodes. */
async function advance(m: Maintenance): Promise<void> {
  const next = nextIndex(m.plan, m.index, progressNodes(m));
  if (next === m.index) return;
  m.index = next;
  // Issue 26 §5: each drain hears it straight, beside the register with its coordinator (which merges).
  await Promise.all([tellAll(m, [...m.nodes.keys()]), tellDrains(m)]);
}

/**
 * NM-2.6 without a poll: one long activity that returns the selection once it differs from the
 * last read (a node labelled in or out, joining or deleted), or at its renewal; its answer wakes the loop.
 */
function watchSelection(m: Maintenance): void {
  if (m.watching || !m.selection) return;
  const scope = new CancellationScope();
  m.watching = scope;
  const { nodes, totalNodes, elsewhere } = m.selection;
  const input = { nodeSelector: m.spec.nodeSelector as NodeSelector, nodes, totalNodes, ...rolloutAsk(m), ...(m.spec.rollout ? { elsewhere: elsewhere ?? {} } : {}) };
  scope
    .run(() => waits.watchMaintenanceSelection.executeWithOptions({ summary: 'watch the selection' }, [input]))
    .then(
      (r) => {
        if (m.watching !== scope) return;
        m.watching = undefined;
        if (r.changed) {
          m.freshSelection = r.selection;
          m.dirty = true;
        } else watchSelection(m); // renewal: nothing changed
      },
      () => {
        if (m.watching === scope) m.watching = undefined;
      },
    );
}

export function stopWatching(m: Maintenance): void {
  m.watching?.cancel();
  m.watching = undefined;
}

/** NM-4.8: a selector that takes every node waits for the allow-all annotation (or Complete); #28: one over the limit, for a smaller selection. */
async function admitSelection(m: Maintenance): Promise<boolean> {
  for (;;) {
    const sel = m.freshSelection ?? (await select(m));
    m.freshSelection = sel;
    m.selection = sel;
    // #28: over the limit, refused before anything is touched (no finalizer, no node, no slot) until it shrinks.
    m.tooMany = overLimit(sel);
    const all = !m.tooMany && sel.nodes.length > 0 && sel.nodes.length === sel.totalNodes;
    m.selectsAll = all ? { total: sel.totalNodes, acknowledged: m.allowAllNodes } : undefined;
    await warnAboutSelection(m, sel);
    if (!m.tooMany && (!all || m.allowAllNodes)) return true;
    m.publish();
    m.dirty = false;
    watchSelection(m); // a node joining or leaving changes "every node"; the annotation comes as a message
    await condition(() => m.dirty);
    if (m.desired === 'Complete' || m.deleting) {
      stopWatching(m);
      return false;
    }
  }
}

/** NM-4.10 and NM-4.8: a selection of no node, or of every control-plane node, is worth a warning (not a stop). */
async function warnAboutSelection(m: Maintenance, sel: Selection): Promise<void> {
  const warn = async (reason: string, message: string) =>
    steps.recordEvent.executeWithOptions({ summary: `event ${reason}` }, [
      { involved: maintenanceEventRef(m), type: 'Warning', reason, message, dedupKey: `${m.id}/${reason}/${m.stage}` },
    ]);
  if (m.tooMany) await warn('TooManyNodes', `stage ${m.stage}: ${tooManyMessage(m.tooMany, m.stage)}`);
  if (!sel.nodes.length) await warn('NoNodesSelected', `stage ${m.stage}: the nodeSelector matches no node`);
  if (sel.controlPlaneNodes > 0 && sel.controlPlaneSelected === sel.controlPlaneNodes) {
    await warn('SelectsAllControlPlaneNodes', `stage ${m.stage}: selects all ${sel.controlPlaneNodes} control-plane nodes`);
  }
}
