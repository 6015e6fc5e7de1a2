// Evacuations in a drain (NM-5.1–5.8): pods that register evacuators leave by an Evacuation, not an
// eviction. Each pass hands the due ones to progressEvacuations (activities/drain/evacuate.ts), which
// steps their objects forward from the times they record; this ledger remembers what the drain needs
// across passes: which pods fell back to eviction, and which Evacuations it joined (to withdraw).
import { podKey, type PodRef, type PodVerdict } from '../../shared/drain.js';
import type { EvacuationState } from '../../activities/drain/evacuate.js';
import { longSteps } from '../proxies.js';

const evacuate = longSteps('10 minutes');

export interface EvacuationsCarry {
  fallback: string[];
  joined: PodRef[];
  /** uid → refused evictions since the fallback (NM-5.3). */
  failed?: Array<[string, number]>;
  /** The requester names the drain last joined with. */
  requesters?: string[];
}

export interface Requesting {
  requester: string;
  reason?: string;
  /** Other maintenances draining the node (NM-5.6): they join too, and leave when they no longer cover it. */
  alsoRequesters?: Array<{ name: string; reason?: string }>;
  progressDeadlineSeconds: number;
}

/** Every requester name in effect, the first one first. */
const requesterNames = (r: Requesting) => [r.requester, ...(r.alsoRequesters ?? []).map((x) => x.name)];

export class EvacuationLedger {
  /** uids whose evacuators are all gone: evicted as any other pod (NM-5.3). */
  private readonly fallback: Set<string>;
  /** The Evacuations this drain is a requester of, by pod uid. */
  private readonly joined: Map<string, PodRef>;
  /** This pass: uid → the evacuator's report, and when to look again at the latest. */
  readonly evacuating = new Map<string, { pod: string; namespace: string; evacuator: string; message: string; untilMs: number }>();
  /** This pass: pods whose evacuation ended because they left (NM-5.5). */
  readonly left: string[] = [];
  /** uid → refused evictions since the fallback, as written to the Evacuation's failedEvictions. */
  private readonly failed: Map<string, number>;
  private requesters: string[];

  constructor(carry: EvacuationsCarry | undefined) {
    this.fallback = new Set(carry?.fallback ?? []);
    this.joined = new Map((carry?.joined ?? []).map((p) => [p.uid, p]));
    this.failed = new Map(carry?.failed ?? []);
    this.requesters = carry?.requesters ?? [];
  }

  /** The requester names in effect: one that is gone (its maintenance completed, NM-5.6) leaves every Evacuation joined. */
  async syncRequesters(r: Requesting): Promise<void> {
    const now = requesterNames(r);
    const gone = this.requesters.filter((n) => !now.includes(n));
    for (const name of gone) await this.withdraw(name, undefined, { forget: false });
    this.requesters = now;
  }

  /** NM-5.7: skipPod: no requester wants this pod gone any more. */
  async withdrawPod(r: Requesting, uid: string): Promise<void> {
    const names = requesterNames(r);
    for (const [i, name] of names.entries()) await this.withdraw(name, [uid], { forget: i === names.length - 1 });
  }

  /** NM-5.6 on cancellation: every requester in effect leaves every Evacuation joined. */
  async withdrawAll(r: Requesting): Promise<void> {
    const names = [...new Set([...requesterNames(r), ...this.requesters])];
    for (const name of names) await this.withdraw(name, undefined, { forget: false });
    this.joined.clear();
  }

  /** NM-5.3: counts refusals of fallen-back pods (uid → times) and writes the new totals to their Evacuations. */
  async refused(times: Record<string, number>): Promise<void> {
    const pods: Array<{ namespace: string; uid: string; failedEvictions: number }> = [];
    for (const [uid, n] of Object.entries(times)) {
      const pod = this.joined.get(uid);
      if (!pod || !this.fallback.has(uid) || n <= 0) continue;
      const total = (this.failed.get(uid) ?? 0) + n;
      this.failed.set(uid, total);
      pods.push({ namespace: pod.namespace, uid, failedEvictions: total });
    }
    if (pods.length) await evacuate.recordFailedEvictions.executeWithOptions({ summary: `failedEvictions of ${pods.length} Evacuations` }, [{ pods }]);
  }

  /** An eviction is not for this pod (yet): it has evacuators and has not fallen back. */
  spared(p: PodVerdict): boolean {
    return !!p.evacuators?.length && !this.fallback.has(p.uid);
  }

  /** Steps the due pods' Evacuations. Returns the non-Default pods whose evacuators all gave up: they stay (NM-6.7). */
  async pass(due: PodVerdict[], node: string, r: Requesting): Promise<PodVerdict[]> {
    this.evacuating.clear();
    this.left.length = 0;
    const pods = due.filter((p) => this.spared(p) && !p.terminating);
    if (!pods.length) return [];
    for (const p of pods) this.joined.set(p.uid, { namespace: p.namespace, name: p.name, uid: p.uid });
    const states: EvacuationState[] = await evacuate.progressEvacuations.executeWithOptions(
      { summary: `evacuations of ${pods.length} pods on ${node}` },
      [{ nodeName: node, pods: pods.map((p) => ({ namespace: p.namespace, name: p.name, uid: p.uid })), ...r }],
    );
    const byUid = new Map(pods.map((p) => [p.uid, p]));
    const kept: PodVerdict[] = [];
    for (const s of states) {
      const p = byUid.get(s.uid)!;
      if (s.state === 'evacuating') this.evacuating.set(s.uid, { pod: podKey(p), namespace: p.namespace, evacuator: s.evacuator, message: s.message, untilMs: s.untilMs });
      else if (s.state === 'left') this.left.push(s.uid);
      else if (s.state === 'withdrawn') continue; // the operator's signal: the next pass applies it
      else if (p.podType === 'Default') this.fallback.add(s.uid);
      else kept.push(p);
    }
    return kept;
  }

  /** When the next look is due: the earliest evacuator's deadline (a withdrawal or a hand-over ends the wave wait: `watched`). */
  nextLookMs(): number {
    return Math.min(...[...this.evacuating.values()].map((e) => e.untilMs));
  }

  /** What the wave wait watches instead of a look every few seconds (issue 26): each evacuating pod's Evacuation and who has it in hand. */
  watched(): Array<{ namespace: string; name: string; evacuator: string }> {
    return [...this.evacuating].map(([uid, e]) => ({ namespace: e.namespace, name: uid, evacuator: e.evacuator }));
  }

  /** NM-5.6/5.7: leave these pods' Evacuations (all joined ones when no uids are given). */
  async withdraw(requester: string, uids?: string[], { forget = true } = {}): Promise<void> {
    const pods = [...this.joined.values()].filter((p) => !uids || uids.includes(p.uid));
    if (!pods.length) return;
    await evacuate.withdrawEvacuations.executeWithOptions({ summary: `${requester} withdraws from ${pods.length} Evacuations` }, [{ requester, pods }]);
    if (forget) for (const p of pods) this.joined.delete(p.uid);
  }

  carry(): EvacuationsCarry {
    return { fallback: [...this.fallback], joined: [...this.joined.values()], failed: [...this.failed], requesters: this.requesters };
  }
}
