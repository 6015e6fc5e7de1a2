// What a rolling maintenance adds to its status (RM-6.4, RM-2.2): each node's phase, what a Waiting
// node waits for, its phase times and bootID; status.rollout; the RolloutStopped condition; and the
// lines that say where the rollout stands instead of the all-at-once wording. Pure.
import type { NodeMaintenanceRolloutInput } from '../../../api/rollout.js';
import type { Facts } from '../status.js';
import type { Condition, MaintenanceNodeStatus, MaintenanceStatus, RolloutStatus } from '../types.js';
import { partitionName, plannerAnswer } from './plan.js';
import { inProgress, rolloutPhase, type RolloutRecord } from './record.js';

export interface RolloutFacts {
  rolloutSpec?: NodeMaintenanceRolloutInput;
  rollout?: RolloutRecord;
}

/** RM-6.2: Drained only when every node is Done. */
export function rolloutDrained(r: RolloutRecord | undefined, nodes: number): boolean {
  if (!r) return false; // the rollout has not looked at its nodes yet (Drain just entered)
  const all = Object.values(r.nodes);
  return all.length === nodes && all.every((n) => n.phase === 'Done');
}

/** The status of a rolling maintenance: the all-at-once status with the rollout laid over it. */
export function withRollout(f: Facts, s: MaintenanceStatus, drainLine: (name: string, index: number) => string): MaintenanceStatus {
  const spec = f.rolloutSpec;
  if (!spec) return s;
  const names = f.stage === 'Idle' ? [] : [...f.nodes.keys()];
  const r: RolloutRecord = f.rollout ?? { nodes: {}, paused: false };
  const p = plannerAnswer(spec, r);
  const all = Object.values(r.nodes);
  const rollout: RolloutStatus = {
    phase: rolloutPhase(f),
    maxUnavailable: p.limit,
    ...(spec.partitionBy ? { partitions: p.partitions.slice(0, 1000), ...(p.partition !== undefined ? { partition: p.partition } : {}) } : {}),
    waiting: all.filter((n) => n.phase === 'Waiting' && !n.held).length,
    inProgress: all.filter(inProgress).length,
    done: all.filter((n) => n.phase === 'Done').length,
    failed: all.filter((n) => n.phase === 'Failed').length,
  };
  rollout.message = rolloutLine(rollout, names.length, p.waitingFor, r.stopped) + (r.paused && r.pausedBy ? `; paused by ${r.pausedBy}` : '');
  if (f.stage !== 'Drain' && f.stage !== 'Complete') rollout.message = f.stage === 'Cordon' ? 'the rollout cordons node by node in Drain' : 'not started';
  const nodeStatuses = s.nodeStatuses.map((ns): MaintenanceNodeStatus => {
    const n = r.nodes[ns.nodeRef.name];
    if (!n || f.stage === 'Idle') return ns;
    const report = f.nodes.get(ns.nodeRef.name);
    const waitingFor = n.phase === 'Waiting' ? (n.held ? (report?.budgetWait ?? (report?.claimedBy ? `CycleNodeRequest ${report.claimedBy}` : 'its coordinator')) : p.waitingFor[ns.nodeRef.name]) : undefined;
    const first = nodeLine(n.phase, waitingFor, n.message, n.bootID, f.stage);
    const drainMessage = n.phase === 'Draining' || n.phase === 'Cordoned' ? [drainLine(ns.nodeRef.name, n.index ?? 0), ...ns.drainMessage.split('\n').slice(1)].join('\n') : first;
    return {
      ...ns,
      drainMessage,
      phase: n.phase,
      ...(waitingFor ? { waitingFor } : {}),
      phaseTimes: n.times,
      ...(n.bootID ? { bootID: n.bootID } : {}),
      ...(n.message ? { message: n.message } : {}),
    };
  });
  const conditions: Condition[] = s.conditions.map((c) =>
    c.type === 'Drained' && c.status === 'False' && f.stage === 'Drain' ? { ...c, reason: 'RollingOut', message: rollout.message! } : c,
  );
  conditions.push(r.stopped ? { type: 'RolloutStopped', status: 'True', reason: 'MaxFailures', message: r.stopped } : { type: 'RolloutStopped', status: 'False', reason: rollout.phase, message: '' });
  const drained = s.conditions.some((c) => c.type === 'Drained' && c.status === 'True');
  const message =
    f.stage === 'Cordon' ? `Cordon: nothing held; the rollout cordons node by node in Drain (${names.length} node${names.length === 1 ? '' : 's'} selected)`
    : f.stage === 'Drain' && !drained ? `Drain: rollout ${rollout.message}`
    : s.message;
  return {
    ...s,
    nodeStatuses,
    rollout,
    conditions,
    message,
    drainStatus: f.stage === 'Drain' && !drained ? { ...s.drainStatus, drainMessage: `Rollout ${rollout.message}` } : s.drainStatus,
  };
}

/** "Running: 2 of 6 done, 2 in progress (partition zone-a), 0 failed; 2 waiting for maxUnavailable (2 of 2 in progress)". */
function rolloutLine(r: RolloutStatus, total: number, waitingFor: Record<string, string>, stopped: string | undefined): string {
  const part = r.partition !== undefined && r.partitions ? ` (partition ${partitionName(r.partition)})` : '';
  const why = Object.values(waitingFor);
  const first = why[0];
  const waits = first ? `; ${why.length} waiting for ${first}` : '';
  return `${r.phase}: ${r.done} of ${total} done, ${r.inProgress} in progress${part}, ${r.failed} failed${waits}${stopped ? `; stopped: ${stopped}` : ''}`;
}

function nodeLine(phase: string, waitingFor: string | undefined, message: string | undefined, bootID: string | undefined, stage: string): string {
  switch (phase) {
    case 'Waiting':
      return stage === 'Complete' ? 'Not started' : `Waiting for ${waitingFor ?? 'its turn'}`;
    case 'AwaitingWork':
      return `Drained; awaiting its work${bootID ? ` (bootID ${bootID})` : ''}`;
    case 'Verifying':
      return `Verifying${message ? `: ${message}` : ''}`;
    case 'Done':
      return message ? `Done: ${message}` : 'Done';
    case 'Failed':
      return `Failed: ${message ?? 'unknown'}`;
    default:
      return phase;
  }
}

