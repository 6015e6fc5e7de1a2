// The Node conditions of a maintenance (NM-6.4), KEP-5683's names: MaintenanceInProgress,
// DrainInProgress and Drained, derived from what the coordinator writes anyway (holders, state).
// Best-effort: the state label and the held-by/status annotations are the contract; these are for
// tools that read conditions. They go to nodes/status as a strategic-merge patch, which merges the
// conditions list by `type`, so kubelet's (or kwok's) own conditions are never touched. Pure.
import type { V1Node } from '@kubernetes/client-node';
import { HELD_BY_ANNOTATION, NODE_CONDITION } from '../../api/node-maintenance.js';
import type { NodeMaintenanceState } from './node-state.js';

/** An admin's NodeMaintenance asked for it; the drain has ended (KEP-5683 reasons). */
export const ADMIN_REQUESTED = 'AdminRequested';
export const DRAIN_COMPLETED = 'DrainCompleted';

export interface ConditionValue {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const OURS: string[] = Object.values(NODE_CONDITION);

/**
 * The three conditions for a node held by `holders` in `state`; empty holders: released, all False
 * (`released` names who held it last, for the message).
 */
export function maintenanceConditions(holders: string[], state: NodeMaintenanceState | undefined, released: string[] = []): ConditionValue[] {
  const c = (type: string, on: boolean, reason: string, message: string): ConditionValue => ({ type, status: on ? 'True' : 'False', reason, message });
  if (!holders.length) {
    const message = `no NodeMaintenance holds the node${released.length ? ` (released by ${released.join(', ')})` : ''}`;
    return OURS.map((t) => c(t, false, ADMIN_REQUESTED, message));
  }
  const who = `NodeMaintenance ${[...holders].sort().join(', ')}`;
  const s = state ?? 'Cordoned';
  const held = c(NODE_CONDITION.maintenanceInProgress, true, ADMIN_REQUESTED, `held by ${who}`);
  if (s === 'Drained') {
    return [held, c(NODE_CONDITION.drainInProgress, false, DRAIN_COMPLETED, `drained for ${who}`), c(NODE_CONDITION.drained, true, DRAIN_COMPLETED, `drained for ${who}`)];
  }
  if (s === 'Draining') {
    return [held, c(NODE_CONDITION.drainInProgress, true, ADMIN_REQUESTED, `draining for ${who}`), c(NODE_CONDITION.drained, false, ADMIN_REQUESTED, `draining for ${who}`)];
  }
  const cordoned = `cordoned for ${who}; no drain requested`;
  return [held, c(NODE_CONDITION.drainInProgress, false, ADMIN_REQUESTED, cordoned), c(NODE_CONDITION.drained, false, ADMIN_REQUESTED, cordoned)];
}

export interface PatchedCondition extends ConditionValue {
  lastHeartbeatTime: string;
  lastTransitionTime: string;
}

export interface ConditionsPatch {
  metadata: { resourceVersion: string };
  status: { conditions: PatchedCondition[] };
}

/** RFC 3339 in whole seconds, as the apiserver stores condition times. */
const stamp = (d: Date | string) => new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The nodes/status patch that brings the node's conditions to `wanted`, or undefined when they are
 * there already. Only changed conditions are sent; lastTransitionTime moves only when the status does.
 * A release writes nothing to a node that never carried them (or where they are all False already).
 */
export function nodeConditionsPatch(node: V1Node, wanted: ConditionValue[], now: Date): ConditionsPatch | undefined {
  const current = new Map((node.status?.conditions ?? []).map((c) => [c.type, c]));
  const released = wanted.every((w) => w.status === 'False') && wanted.some((w) => w.type === NODE_CONDITION.maintenanceInProgress);
  if (released && wanted.every((w) => (current.get(w.type)?.status ?? 'False') === 'False')) return undefined;
  const changed: PatchedCondition[] = [];
  for (const w of wanted) {
    const cur = current.get(w.type);
    if (cur && cur.status === w.status && cur.reason === w.reason && cur.message === w.message) continue;
    const transition = cur && cur.status === w.status && cur.lastTransitionTime ? cur.lastTransitionTime : now;
    changed.push({ ...w, lastHeartbeatTime: stamp(now), lastTransitionTime: stamp(transition) });
  }
  if (!changed.length) return undefined;
  return { metadata: { resourceVersion: node.metadata!.resourceVersion! }, status: { conditions: changed } };
}

/** The holders a release lets go of, as the node names them before the release is written. */
export const heldBy = (node: V1Node): string[] => (node.metadata?.annotations?.[HELD_BY_ANNOTATION] ?? '').split(',').filter(Boolean);
