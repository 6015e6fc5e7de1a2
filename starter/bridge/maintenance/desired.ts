// What a NodeMaintenance should look like and what its workflow must be told, as pure functions of
// what the bridge knows: the object (from the cache), its workflow as the tracker last saw it, and
// the time. reconciler.ts computes these first and then only does the I/O
// (test/unit/bridge-maintenance-desired.test.ts covers the mapping without a cluster).
//
//   deleting, no finalizer of ours  → the workflow is told (`deleting`: an Idle maintenance just ends, NM-2.11)
//   deleting, finalizer held        → spec.stage=Complete, the workflow runs Complete; the finalizer goes once
//                                     it reports completed, or when there is no workflow (NM-2.12, NM-2.13)
//   no workflow, invalid spec       → Ready=False InvalidSpec + Warning Event; no workflow, no finalizer (NM-4.7)
//   otherwise                       → the workflow's maintenanceStatus mirrored into status, with its Events
import { ALLOW_ALL_NODES_ANNOTATION } from '../../../api/names.js';
import { MAINTENANCE_FINALIZER, NodeMaintenanceSpec, type NodeMaintenanceStatus } from '../../../api/node-maintenance.js';
import { parseWorkflowId } from '../../../workflows/ids.js';
import type { MaintenanceStatus } from '../../../workflows/maintenance/types.js';
import { closedMaintenance, invalidMaintenanceStatus, maintenanceCompleted, maintenanceEvents, maintenanceObjectStatus } from './status.js';
import type { NodeMaintenanceObject } from './objects.js';
import { invalidSpecMessage, mergePatchOf, statusChanged, type StatusEvent } from '../workflow-status.js';
import type { Tracked } from '../tracker.js';

export type MaintenanceWorkflowView = Pick<Tracked<MaintenanceStatus>, 'workflowId' | 'runId' | 'generation' | 'state' | 'closed'>;

/** What deletion calls for. */
export type DeletionStep =
  /** Not being deleted. */
  | { kind: 'none' }
  /** Our finalizer is not on it (Idle): tell the workflow, if one runs, that the object goes. */
  | { kind: 'tell' }
  /** Complete first: patch spec.stage (unless it says Complete already), tell the workflow, wait. */
  | { kind: 'complete'; patchStage: boolean }
  /** Done (or nothing was ever started): remove our finalizer. */
  | { kind: 'release'; finalizers: string[] }
  /** The workflow closed without completing Complete: the finalizer stays (nodes may still be held). */
  | { kind: 'stuck'; why: string };

export interface MaintenanceDesired {
  /** The status to write (a merge patch of the stored one), or undefined when it is right already. */
  status?: { next: NodeMaintenanceStatus; patch: Record<string, unknown> };
  /** The Events that go with the status change (written first: a retry finds them deduplicated). */
  events: StatusEvent[];
  /** Why no workflow may be started: the spec is invalid (the status says so). */
  invalidSpec?: string;
  deletion: DeletionStep;
}

export interface MaintenanceDesiredInput {
  obj: NodeMaintenanceObject;
  /** undefined: no workflow is known for this object (none started yet, or none exists). */
  workflow: MaintenanceWorkflowView | undefined;
  now: Date;
}

/** The object acknowledges a selector that takes every node (NM-4.8). */
export const allowsAllNodes = (obj: NodeMaintenanceObject) => obj.metadata.annotations?.[ALLOW_ALL_NODES_ANNOTATION] === 'true';

const specReason = (obj: NodeMaintenanceObject) => {
  const r = (obj.spec as { reason?: unknown } | undefined)?.reason;
  return typeof r === 'string' && r ? r : undefined;
};
const specStage = (obj: NodeMaintenanceObject) => (obj.spec as { stage?: unknown } | undefined)?.stage;

export function desiredMaintenance(i: MaintenanceDesiredInput): MaintenanceDesired {
  const { obj, workflow: w } = i;
  const out: MaintenanceDesired = { events: [], deletion: { kind: 'none' } };
  if (obj.metadata.deletionTimestamp) {
    if (!obj.metadata.finalizers?.includes(MAINTENANCE_FINALIZER)) {
      out.deletion = { kind: 'tell' };
      return out;
    }
    if (w) Object.assign(out, mirror(obj, w, i.now));
    const release = { kind: 'release' as const, finalizers: (obj.metadata.finalizers ?? []).filter((f) => f !== MAINTENANCE_FINALIZER) };
    if (!w || maintenanceCompleted(w.state, w.closed)) out.deletion = release;
    else if (w.closed) out.deletion = { kind: 'stuck', why: closedMaintenance(w.closed, w.state, w.workflowId).closedWithout ?? `workflow ${w.workflowId} closed` };
    else out.deletion = { kind: 'complete', patchStage: specStage(obj) !== 'Complete' };
    return out;
  }
  if (!w) {
    const parsed = NodeMaintenanceSpec.safeParse(obj.spec);
    if (parsed.success) return out;
    const message = invalidSpecMessage(parsed.error);
    out.invalidSpec = message;
    const next = invalidMaintenanceStatus(obj.status, message, obj.metadata.generation, i.now);
    if (statusChanged(obj.status, next)) {
      out.status = { next, patch: mergePatchOf(obj.status, next) };
      out.events.push({ type: 'Warning', reason: 'InvalidSpec', message, dedup: `InvalidSpec/${obj.metadata.generation}/${message}` });
    }
    return out;
  }
  Object.assign(out, mirror(obj, w, i.now));
  return out;
}

function mirror(obj: NodeMaintenanceObject, w: MaintenanceWorkflowView, now: Date): Pick<MaintenanceDesired, 'status' | 'events'> {
  const { state, closedWithout } = w.closed ? closedMaintenance(w.closed, w.state, w.workflowId) : { state: w.state, closedWithout: undefined };
  const next = maintenanceObjectStatus({ prev: obj.status, workflow: { workflowId: w.workflowId, runId: w.runId }, state, observedGeneration: w.generation, closedWithout, now });
  if (!statusChanged(obj.status, next)) return { events: [] };
  // The workflow's reason first: the cached object may not show yet the spec.reason a setStage wrote.
  return { status: { next, patch: mergePatchOf(obj.status, next) }, events: maintenanceEvents(obj.status, next, state?.reason || specReason(obj)) };
}

/**
 * What the running workflow must be sent as `specChanged`: every new generation (NM-2.14, NM-2.16)
 * and a change of the allow-all-nodes annotation (NM-4.8). `sentAllowAllNodes`: what it was last
 * sent (undefined after a bridge restart: it started without the acknowledgement, or was sent it).
 */
export function specChangeToSend(
  obj: NodeMaintenanceObject,
  w: Pick<MaintenanceWorkflowView, 'generation' | 'closed'>,
  sentAllowAllNodes: boolean | undefined,
): { generation: number | undefined; allowAllNodes: boolean; newGeneration: boolean } | undefined {
  if (w.closed) return undefined;
  const generation = obj.metadata.generation;
  const newGeneration = generation !== undefined && w.generation !== undefined && generation > w.generation;
  const allowAllNodes = allowsAllNodes(obj);
  if (!newGeneration && allowAllNodes === (sentAllowAllNodes ?? false)) return undefined;
  return { generation, allowAllNodes, newGeneration };
}

/**
 * Running maintenance workflows whose object is gone: deleted while Idle (no finalizer) while no
 * bridge led, so no one told them (NM-2.11). Judged only on a synced cache; a workflow younger than
 * `graceMs` is left alone (its object may still be on its way into the cache).
 */
export function orphanedMaintenances(running: ReadonlyArray<{ workflowId: string; startTime: Date }>, liveUids: ReadonlySet<string>, now: Date, graceMs: number): string[] {
  return running
    .filter((w) => {
      const p = parseWorkflowId(w.workflowId);
      return p?.kind === 'maintenance' && !liveUids.has(p.uid) && now.getTime() - w.startTime.getTime() >= graceMs;
    })
    .map((w) => w.workflowId);
}
