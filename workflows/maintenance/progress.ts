// A maintenance's progress over its nodes (spec §3 A3, NM-1.6, drainStatus.drainMessage): pure and
// deterministic, used by the maintenance workflow `nm/<name>/<uid>`. No Temporal, no clocks.
import { reached, selectorKey, type Lane, type PlanEntry } from '../../api/drain-plan.js';
import type { NodeCounts } from './types.js';

/** One node of M as the maintenance sees it: T(N) and finished(N) as its coordinator last reported. */
export interface ProgressNode {
  name: string;
  lanes: Lane[];
  finished: boolean;
  /** The Node was deleted: counts as reached and finished, and leaves reachedDrainTargets. */
  gone?: boolean;
  /** Claimed by a CycleNodeRequest (NM-7.5): takes no part in advancing. */
  claimed?: boolean;
  /**
   * The lowest priority of a Default pod that T(N) does not target yet (null: there is none); undefined
   * when unknown. An entry that no such pod can match is empty on N: it passes without waiting for N
   * to reach it (A3, "entries that match no pod pass in one evaluation").
   */
  lowestUntargeted?: number | null;
}

/** No pod left on N can match `e` (known only once N is finished at its targets): e passes there at once. */
export const emptyOn = (n: ProgressNode, e: PlanEntry): boolean =>
  n.finished && n.lowestUntargeted !== undefined && (e.podType !== 'Default' || n.lowestUntargeted === null || n.lowestUntargeted > e.podPriority);

/** Ready for entry e: gone, or T(N) reaches e and N is finished. Claimed nodes are ready (they take no part). */
export const nodeReady = (n: ProgressNode, e: PlanEntry): boolean => !!n.gone || !!n.claimed || (n.finished && reached(n.lanes, e)) || emptyOn(n, e);

/**
 * A3: the new i(M). From `index`, move to the next entry while every node that takes part has
 * reached the current entry and is finished; entries the nodes' targets already reach pass in one
 * evaluation. Returns plan.length once past the last entry. With no node taking part every entry passes.
 */
export function advance(plan: readonly PlanEntry[], index: number, nodes: readonly ProgressNode[]): number {
  let i = Math.max(0, index);
  while (i < plan.length && nodes.every((n) => nodeReady(n, plan[i]!))) i++;
  return Math.max(i, index);
}

/** The first node of M (by name) that is not ready for M's current entry, other than `except`. */
export function firstNotReady(plan: readonly PlanEntry[], index: number, nodes: readonly ProgressNode[], except?: string): ProgressNode | undefined {
  const e = plan[index];
  if (!e) return undefined;
  return [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).find((n) => n.name !== except && !nodeReady(n, e));
}

/**
 * limitedBy for M on a node, from the node's report alone (same answer as targets.ts limitedBy):
 * [L(N)] when L(N) is another maintenance and T(N) does not reach M's current entry; [] when the
 * node is gone or M is past its last entry.
 */
export function limitedOn(report: { limiting?: string; lanes: readonly Lane[]; gone?: boolean }, m: { name: string; plan: readonly PlanEntry[]; index: number }): string[] {
  const e = m.plan[m.index];
  if (report.gone || !e || !report.limiting || report.limiting === m.name || reached(report.lanes, e)) return [];
  return [report.limiting];
}

/** Rule 7's "Waiting for node N2 (X)." facts: the first other node not ready, and who limits M there. */
export function waitingForNode(
  m: { name: string; plan: readonly PlanEntry[]; index: number },
  nodes: ReadonlyArray<ProgressNode & { limiting?: string }>,
  node: string,
): { name: string; limitedBy?: string } | undefined {
  const n2 = firstNotReady(m.plan, m.index, nodes, node) as (ProgressNode & { limiting?: string }) | undefined;
  return n2 && { name: n2.name, limitedBy: limitedOn(n2, m)[0] };
}

const laneId = (l: Lane) => `${l.podType}/${selectorKey(l.podSelector)}`;

/**
 * NM-1.6 reachedDrainTargets: for each lane (podType and selector) present on every existing node,
 * the lowest priority among them; a lane missing on any existing node is omitted. Gone nodes do not
 * count; with no existing node, []. Order: the first existing node's lane order.
 */
export function reachedDrainTargets(nodes: ReadonlyArray<Pick<ProgressNode, 'lanes' | 'gone'>>): Lane[] {
  const live = nodes.filter((n) => !n.gone);
  if (!live.length) return [];
  const out: Lane[] = [];
  for (const l of live[0]!.lanes) {
    let prio = l.podPriority;
    let everywhere = true;
    for (const n of live.slice(1)) {
      const m = n.lanes.find((x) => laneId(x) === laneId(l));
      if (!m) {
        everywhere = false;
        break;
      }
      prio = Math.min(prio, m.podPriority);
    }
    if (everywhere) out.push({ ...l, podPriority: prio });
  }
  return out;
}

/** drainStatus counts (NM-1.6): sums over the nodes. */
export function sumCounts(nodes: readonly NodeCounts[]): NodeCounts {
  const s: NodeCounts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };
  for (const n of nodes) {
    s.podsPendingEvictionRequest += n.podsPendingEvictionRequest;
    s.activeEvictionRequests += n.activeEvictionRequests;
    s.podsBlocked += n.podsBlocked;
    s.podsKept += n.podsKept;
  }
  return s;
}

/** Per node of M, for drainStatus.drainMessage: finished, and who limits M there (limitedBy of targets.ts). */
export interface StatusNode {
  finished: boolean;
  limitedBy: readonly string[];
  gone?: boolean;
  claimed?: boolean;
  /** Not cordoned yet: a NodeDisruptionBudget's refusal (issue 15). */
  budgetWait?: string;
}

/**
 * drainStatus.drainMessage: "Drained"; "Waiting for X." when every node is finished and M waits only
 * on X; "Draining (limited by X, Y)" naming every X that limits some node (sorted); else "Draining".
 * Gone and claimed nodes count as finished and limit nothing.
 */
export function drainStatusMessage(drained: boolean, nodes: readonly StatusNode[]): string {
  if (drained) return 'Drained';
  const live = nodes.filter((n) => !n.gone && !n.claimed);
  const limiters = [...new Set(live.flatMap((n) => n.limitedBy))].sort();
  if (live.every((n) => n.finished) && limiters.length === 1) return `Waiting for ${limiters[0]}.`;
  const base = limiters.length ? `Draining (limited by ${limiters.join(', ')})` : 'Draining';
  return base + budgetWaitSuffix(live);
}

/** "; 2 nodes waiting for NodeDisruptionBudget x: 2 of 2 nodes disrupted" (the first refusal), or ''. */
export function budgetWaitSuffix(nodes: ReadonlyArray<{ budgetWait?: string }>): string {
  const waiting = nodes.filter((n) => n.budgetWait);
  if (!waiting.length) return '';
  return `; ${waiting.length} node${waiting.length === 1 ? '' : 's'} ${waiting[0]!.budgetWait}`;
}
