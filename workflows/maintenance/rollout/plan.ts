// Which Waiting nodes may start now (RM-1.3, RM-1.4, RM-4.4, RM-5.1), and what the others wait for.
// Pure: the rollout engine (engine.ts) asks it on every pass.
import { maxUnavailableOf } from '../../../api/rollout-count.js';
import type { NodeMaintenanceRolloutInput, RolloutNodePhase } from '../../../api/rollout.js';
import { finished, inProgress, type RolloutRecord } from './record.js';
import { partitionOrder, rolloutOrder } from './order.js';

export interface PlannerNode {
  name: string;
  phase: RolloutNodePhase;
  partition: string;
  /** Started (registered with its coordinator) and not released. */
  held?: boolean;
  /** Who else holds it (RM-1.5): a Waiting node so held is unavailable already, and is waited for. */
  elsewhere?: string;
}

export interface PlannerInput {
  nodes: readonly PlannerNode[];
  /** spec.rollout.maxUnavailable as written (a count or a percentage). */
  maxUnavailable: number | string;
  maxFailures: number;
  paused: boolean;
}

export interface PlannerAnswer {
  /** Nodes to start now, in rollout order. */
  start: string[];
  /** What each Waiting node not started waits for (RM-2.2). */
  waitingFor: Record<string, string>;
  /** maxUnavailable in nodes. */
  limit: number;
  /** Partitions in rollout order, and the one being rolled (undefined once every node is finished). */
  partitions: string[];
  partition?: string;
  /** Nodes in progress once `start` has started. */
  inProgress: number;
  /** Set when Failed nodes outnumber maxFailures: why the rollout stops. */
  stop?: string;
}

/** How a partition reads in a message ("" is the nodes without the label). */
export const partitionName = (p: string): string => (p === '' ? '(no label)' : p);

export function nextToStart(input: PlannerInput): PlannerAnswer {
  const { nodes } = input;
  const limit = maxUnavailableOf(input.maxUnavailable, nodes.length);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const order = rolloutOrder(nodes);
  const partitions = partitionOrder(nodes.map((n) => n.partition));
  const failed = order.filter((n) => byName.get(n)!.phase === 'Failed');
  const stop = failed.length > input.maxFailures ? `${failed.length} node${failed.length === 1 ? '' : 's'} failed (maxFailures ${input.maxFailures}): ${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', …' : ''}` : undefined;
  // One partition at a time: the first in order with a node not Done or Failed.
  const partition = partitions.find((p) => nodes.some((n) => n.partition === p && !finished(n)));
  // Each node counts once, whoever else holds it (RM-1.5): ours in progress, and the Waiting ones held elsewhere.
  const heldElsewhere = nodes.filter((n) => n.phase === 'Waiting' && !n.held && n.elsewhere).length;
  let busy = new Set(nodes.filter(inProgress).map((n) => n.name)).size + heldElsewhere;
  const busyLine = () => `maxUnavailable (${busy} of ${limit} in progress${heldElsewhere ? `, ${heldElsewhere} held elsewhere` : ''})`;
  const start: string[] = [];
  const waitingFor: Record<string, string> = {};
  for (const name of order) {
    const n = byName.get(name)!;
    if (n.phase !== 'Waiting' || n.held) continue;
    if (stop) waitingFor[name] = 'rollout stopped';
    else if (input.paused) waitingFor[name] = 'paused';
    else if (n.elsewhere) waitingFor[name] = `held by ${n.elsewhere}`;
    else if (n.partition !== partition) waitingFor[name] = `partition ${partitionName(partition ?? '')}`;
    else if (busy >= limit) waitingFor[name] = busyLine();
    else {
      start.push(name);
      busy++;
    }
  }
  return { start, waitingFor, limit, partitions, partition, inProgress: busy, ...(stop ? { stop } : {}) };
}

/** The planner's answer over the rollout's record as it stands (the engine and the status ask it). */
export function plannerAnswer(spec: NodeMaintenanceRolloutInput, r: RolloutRecord): PlannerAnswer {
  const nodes = Object.entries(r.nodes).map(([name, n]) => ({ name, phase: n.phase, partition: n.partition, held: n.held, ...(n.elsewhere ? { elsewhere: n.elsewhere } : {}) }));
  return nextToStart({ nodes, maxUnavailable: spec.maxUnavailable ?? 1, maxFailures: spec.maxFailures ?? 0, paused: r.paused });
}
