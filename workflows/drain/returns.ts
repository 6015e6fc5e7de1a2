// Pods that come back. A pod that arrives on the node after the drain started is evicted too (a
// maintenance must not leave newcomers behind), but a controller whose pods keep being scheduled
// back onto the cordoned node (they tolerate its taint, or set nodeName) must not be chased: its
// arrivals are evicted at most MAX_RETURN_EVICTIONS times in one drain, with a growing pause, and
// after that they are left on the node, named in status, for the node's deletion (a cycle) or the
// end of the maintenance to settle. kubectl waits only for the pods it listed; Karpenter never
// evicts pods that tolerate its taint. Pure: the workflow keeps one ledger per drain.
import { podKey, type PodVerdict } from '../../shared/drain.js';
import { UNSCHEDULABLE_TAINT } from '../../api/well-known.js';

export const MAX_RETURN_EVICTIONS = 3;

/** Pause before evicting a controller's arrival again, after n such evictions: 2 s, 4 s, 8 s ... */
export const returnBackoffMs = (n: number) => (n <= 0 ? 0 : Math.min(60_000, 1000 * 2 ** n));

interface Count {
  /** Its arrivals evicted (the returns): at most MAX_RETURN_EVICTIONS. */
  evictions: number;
  lastAtMs: number;
  /** Every eviction of its pods in this drain, the first ones included: what status reports. */
  all?: number;
}

/** What the ledger carries across continue-as-new. */
export interface ReturnsCarry {
  initial: string[];
  counts: Array<[string, Count]>;
}

export interface ReturnsVerdict {
  /** Left on the node for good (cap reached): uid → why. */
  left: Map<string, string>;
  /** Arrivals to evict later (their controller's pause runs): uid → when, and why. */
  paused: Map<string, { atMs: number; reason: string }>;
}

const ownerOf = (p: PodVerdict) => p.controller ?? `Pod ${podKey(p)}`;

export class ReturnsLedger {
  private initial: Set<string> | undefined;
  private readonly counts: Map<string, Count>;

  constructor(carry?: ReturnsCarry) {
    this.initial = carry ? new Set(carry.initial) : undefined;
    this.counts = new Map(carry?.counts ?? []);
  }

  /** The pods on the node when the drain started draining are not arrivals. */
  start(pods: PodVerdict[]): void {
    this.initial ??= new Set(pods.map((p) => p.uid));
  }

  isArrival(p: PodVerdict): boolean {
    return this.initial !== undefined && !this.initial.has(p.uid);
  }

  /** Which arrivals are left alone now, and which wait for their controller's pause. */
  judge(pods: PodVerdict[], nowMs: number): ReturnsVerdict {
    const out: ReturnsVerdict = { left: new Map(), paused: new Map() };
    for (const p of pods) {
      if (!this.isArrival(p) || p.terminating || p.action === 'Skip') continue;
      const c = this.counts.get(ownerOf(p));
      if (!c) continue;
      if (c.evictions >= MAX_RETURN_EVICTIONS) out.left.set(p.uid, leftReason(p, c));
      else if (nowMs < c.lastAtMs + returnBackoffMs(c.evictions)) {
        out.paused.set(p.uid, { atMs: c.lastAtMs + returnBackoffMs(c.evictions), reason: `came back after eviction (${evictedText(p, c)}; ${c.evictions} of at most ${MAX_RETURN_EVICTIONS} returns evicted); evicted again after a pause` });
      }
    }
    return out;
  }

  /** Count the pods just evicted, per controller: every eviction for status, the arrivals' for the cap and the pause. */
  record(evicted: PodVerdict[], nowMs: number): void {
    for (const p of evicted) {
      const c = this.counts.get(ownerOf(p)) ?? { evictions: 0, lastAtMs: 0 };
      const all = (c.all ?? c.evictions) + 1;
      this.counts.set(ownerOf(p), this.isArrival(p) ? { evictions: c.evictions + 1, lastAtMs: nowMs, all } : { ...c, all });
    }
  }

  carry(): ReturnsCarry {
    return { initial: [...(this.initial ?? [])], counts: [...this.counts] };
  }
}

/** "Pods of ReplicaSet app/x evicted 4 times in this drain": every eviction of them, the first ones and the returns. */
function evictedText(p: PodVerdict, c: Count): string {
  const n = c.all ?? c.evictions;
  return `${p.controller ? `Pods of ${p.controller}` : ownerOf(p)} evicted ${n} ${n === 1 ? 'time' : 'times'} in this drain`;
}

function leftReason(p: PodVerdict, c: Count): string {
  const why = p.toleratesUnschedulable ? `: tolerates ${UNSCHEDULABLE_TAINT}` : '';
  return `returns after eviction${why} (${evictedText(p, c)}); left on the node`;
}
