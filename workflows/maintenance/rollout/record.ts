// The rollout's record (docs/rolling-maintenance.md RM-7.1): per node its phase, phase times,
// partition, plan position and recorded bootID. Plain data, kept in workflow state and carried
// across continue-as-new as it is; pure helpers only (no Temporal, no clocks).
import type { RolloutNodePhase, RolloutPhase } from '../../../api/rollout.js';

export interface RolloutNode {
  phase: RolloutNodePhase;
  /** The partitionBy label's value when first seen ("" without it). */
  partition: string;
  /** When the node entered each phase (RFC 3339), oldest first. */
  times: Array<{ phase: RolloutNodePhase; time: string }>;
  /** Registered with its coordinator and not released by this rollout. */
  held?: boolean;
  /** Its own plan position i (RM-2.3), while started. */
  index?: number;
  /** bootID read when it was drained (RM-3.1). */
  bootID?: string;
  /** The fresh read before AwaitingWork has answered (bootID and ip recorded), or found the node gone. */
  bootRead?: 'read' | 'gone';
  /** The Node's uid read with the bootID: a node re-created under its name is not a reboot (RM-3.2). */
  uid?: string;
  /** Who else holds it (another maintenance, a cycle's claim), from the selection: a Waiting node so held is waited for (RM-1.5). */
  elsewhere?: string;
  /** The node's InternalIP (health checks' {{ .NodeIP }}). */
  ip?: string;
  /** Its work was seen done (reboot, annotation, manual, gone): the loop releases it. */
  workDone?: string;
  /** Why it failed, or what it waits for. */
  message?: string;
}

export interface RolloutRecord {
  nodes: Record<string, RolloutNode>;
  paused: boolean;
  /** Who paused it (the update's caller identity), while paused. */
  pausedBy?: string;
  /** Why the rollout stopped (maxFailures passed), once it has. */
  stopped?: string;
}

/** Phases a started node is in until it is Done or Failed (RM-1.4). */
export const IN_PROGRESS: readonly RolloutNodePhase[] = ['Cordoned', 'Draining', 'AwaitingWork', 'Verifying'];

/** Started and not finished: counted against maxUnavailable (a node held while it waits for a budget slot too). */
export const inProgress = (n: Pick<RolloutNode, 'phase' | 'held'>): boolean => IN_PROGRESS.includes(n.phase) || (n.phase === 'Waiting' && !!n.held);

export const finished = (n: Pick<RolloutNode, 'phase'>): boolean => n.phase === 'Done' || n.phase === 'Failed';

/** The phases whose time counts against nodeTimeout (RM-4.1). */
export const TIMED: readonly RolloutNodePhase[] = ['Cordoned', 'Draining', 'AwaitingWork'];

/** The node enters `phase` at `time` (a repeated phase keeps its first time). */
export function enter(n: RolloutNode, phase: RolloutNodePhase, time: string): void {
  if (n.phase === phase && n.times.length) return;
  n.phase = phase;
  n.times = [...n.times.filter((t) => t.phase !== phase), { phase, time }].slice(-8);
}

/** When the node was cordoned (the start of its nodeTimeout). */
export const cordonedAt = (n: RolloutNode): string | undefined => n.times.find((t) => t.phase === 'Cordoned')?.time;

/** Running, Paused, Stopped (maxFailures passed) or Done (every node Done or Failed). */
export function rolloutPhase(m: { rollout?: RolloutRecord }): RolloutPhase {
  const r = m.rollout;
  if (!r) return 'Running';
  if (r.stopped) return 'Stopped';
  const nodes = Object.values(r.nodes);
  if (nodes.length && nodes.every(finished)) return 'Done';
  return r.paused ? 'Paused' : 'Running';
}

/** The record as carried across continue-as-new: a finished node keeps its phase, times, partition, bootID and message only. */
export function compactRecord(r: RolloutRecord): RolloutRecord {
  const nodes: Record<string, RolloutNode> = {};
  for (const [name, n] of Object.entries(r.nodes)) {
    if (!finished(n) || n.held) nodes[name] = n;
    else nodes[name] = { phase: n.phase, partition: n.partition, times: n.times, ...(n.bootID ? { bootID: n.bootID } : {}), ...(n.message ? { message: n.message } : {}) };
  }
  return { ...r, nodes };
}
