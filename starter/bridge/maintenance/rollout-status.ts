// A rolling maintenance (spec.rollout) in its object's status, pure: status.rollout and each node's
// phase fields, bounded to what the CRD's schema holds, and the Events their transitions call for
// (RolloutStopped, NodeFailed, NodeDone; and CannotFinish, which a maintenance without a rollout
// raises). Used by status.ts; tested in test/unit/bridge-rollout-status.test.ts.
import type { NodeMaintenanceStatus } from '../../../api/node-maintenance.js';
import type { MaintenanceNodeStatus, RolloutStatus } from '../../../workflows/maintenance/types.js';
import type { StatusEvent } from '../workflow-status.js';

/** The CRD's bounds: phaseTimes (one per phase, 8 at most), partitions, and text a person reads. */
export const ROLLOUT_BOUNDS = { phaseTimes: 8, partitions: 1000, text: 1024 } as const;

const clip = (s: string | undefined) => (s === undefined ? undefined : s.length > ROLLOUT_BOUNDS.text ? `${s.slice(0, ROLLOUT_BOUNDS.text - 1)}…` : s);
const firstLine = (s: string | undefined) => clip(s?.split('\n')[0]!.trim());

type ObjectNodeStatus = NonNullable<NodeMaintenanceStatus['nodeStatuses']>[number];

/**
 * A node's status as the object holds it: the workflow's, with the rollout fields bounded (the
 * newest phase times; text clipped). A node without a phase is passed as it is (no new keys).
 */
export function objectNodeStatus(n: MaintenanceNodeStatus): ObjectNodeStatus {
  if (n.phase === undefined && n.phaseTimes === undefined && n.message === undefined && n.waitingFor === undefined) return n;
  const { phaseTimes, message, waitingFor, ...rest } = n;
  return {
    ...rest,
    ...(waitingFor !== undefined && { waitingFor: firstLine(waitingFor) }),
    ...(phaseTimes !== undefined && { phaseTimes: phaseTimes.slice(-ROLLOUT_BOUNDS.phaseTimes) }),
    ...(message !== undefined && { message: clip(message) }),
  };
}

/** status.rollout: the workflow's, with its partitions bounded and its message one line. */
export function objectRolloutStatus(r: RolloutStatus | undefined): NodeMaintenanceStatus['rollout'] {
  if (!r) return undefined;
  const { partitions, message, ...rest } = r;
  return {
    ...rest,
    ...(partitions !== undefined && { partitions: partitions.slice(0, ROLLOUT_BOUNDS.partitions) }),
    ...(message !== undefined && { message: firstLine(message) }),
  };
}

const conditionOf = (s: NodeMaintenanceStatus | undefined, type: string) => s?.conditions?.find((c) => c.type === type);
const phases = (s: NodeMaintenanceStatus | undefined) => new Map((s?.nodeStatuses ?? []).map((n) => [n.nodeRef.name, n.phase]));

/**
 * The Events of a rolling maintenance's status change (`before`: the stored status of the same
 * workflow, or undefined), each once per occurrence: a Warning when RolloutStopped or CannotFinish
 * turns True (the dedup key names the transition's time, which the stored status keeps, so a
 * resync or another leader writes none), a Warning NodeFailed per node newly Failed, a Normal
 * NodeDone per node newly Done.
 */
export function rolloutEvents(wf: string, before: NodeMaintenanceStatus | undefined, next: NodeMaintenanceStatus): StatusEvent[] {
  const out: StatusEvent[] = [];
  for (const type of ['RolloutStopped', 'CannotFinish'] as const) {
    const c = conditionOf(next, type);
    if (c?.status !== 'True' || conditionOf(before, type)?.status === 'True') continue;
    out.push({ type: 'Warning', reason: type, message: c.message || c.reason, dedup: `${wf}/${type}/${c.lastTransitionTime ?? ''}` });
  }
  const was = phases(before);
  for (const n of next.nodeStatuses ?? []) {
    const node = n.nodeRef.name;
    if (n.phase === 'Failed' && was.get(node) !== 'Failed') {
      out.push({ type: 'Warning', reason: 'NodeFailed', message: `node ${node} failed${n.message ? `: ${firstLine(n.message)}` : ''}`, dedup: `${wf}/NodeFailed/${node}` });
    }
    if (n.phase === 'Done' && was.get(node) !== 'Done') {
      out.push({ type: 'Normal', reason: 'NodeDone', message: `node ${node} done: its work is complete and verified; released`, dedup: `${wf}/NodeDone/${node}` });
    }
  }
  return out;
}
