// The per-node pod counts a targets-mode drain reports to its NodeMaintenance (NM-1.7). Pure: the
// workflow runs it on each pass with what it knows about each pod (refusals, evictions just made).
import type { NodeCounts } from '../maintenance/types.js';
import { podKey, type PodVerdict } from '../../shared/drain.js';

export interface CountFacts {
  /** ns/name of pods an operator told the drain to leave alone (skipPod): counted as Skip. */
  skipped: ReadonlySet<string>;
  /** ns/name of pods whose eviction is refused (a PDB) and retried. */
  refused: ReadonlySet<string>;
  /** uids evicted or deleted in this pass (not yet terminating in the snapshot). */
  leaving: ReadonlySet<string>;
}

const terminal = (p: PodVerdict) => p.phase === 'Succeeded' || p.phase === 'Failed';

/**
 * Over the pods that are neither Skip nor in a terminal phase: kept (targeted DaemonSet/static pods),
 * active (asked to leave and still here: evicted, deleted, refused and retried, terminating, or a
 * targeted WaitCompleted pod), of which blocked (refused), and pending (the rest, targeted or not).
 * pending + active + kept = the non-Skip, non-terminal pods.
 */
export function nodeCounts(pods: readonly PodVerdict[], f: CountFacts): NodeCounts {
  const c: NodeCounts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };
  for (const p of pods) {
    if (terminal(p)) continue;
    if (p.kept) {
      c.podsKept++;
      continue;
    }
    const k = podKey(p);
    if (p.action === 'Skip' || f.skipped.has(k)) continue;
    if (f.refused.has(k)) {
      c.activeEvictionRequests++;
      c.podsBlocked++;
    } else if (p.terminating || f.leaving.has(p.uid) || (p.targeted !== false && p.action === 'WaitCompleted')) {
      c.activeEvictionRequests++;
    } else {
      c.podsPendingEvictionRequest++;
    }
  }
  return c;
}

/**
 * The lowest priority among the Default pods no lane targets yet and that would block the drain once
 * targeted (not Skip, not terminal, not leaving); undefined when there is none. A plan entry of lower
 * priority can match no pod on this node, so a maintenance passes it without a round trip (A3).
 */
export function lowestUntargeted(pods: readonly PodVerdict[], skipped: ReadonlySet<string>): number | undefined {
  let low: number | undefined;
  for (const p of pods) {
    if (p.targeted !== false || p.podType !== 'Default' || p.action === 'Skip' || terminal(p) || p.terminating || skipped.has(podKey(p))) continue;
    const prio = p.priority ?? 0;
    if (low === undefined || prio < low) low = prio;
  }
  return low;
}
