// Dependency locks on a wave (yaook; spec NM-5.9–5.13). A due provider stays while any lock on one of
// its components exists: a node annotation, or a pod on the node that requires the component. Pods
// that hold implicit locks are promoted into the wave (they leave first, ahead of the plan), so the
// provider follows once they are gone. Pure and deterministic: the workflow runs it after planWave.
import { REQUIRES_ANNOTATION } from '../../api/dependency-locks.js';
import { podKey, type PodVerdict } from '../../shared/drain.js';
import type { WavePlan } from './waves.js';

export interface LockVerdict {
  /** uid → why the provider stays: the components, their holders, or the cycle it is part of. */
  held: Map<string, string>;
  /** Pods evicted ahead of the plan because a due provider waits for them, with the Warning Event's message. */
  promoted: Array<{ pod: PodVerdict; message: string }>;
  /** Components with a due, held provider: the node's maintenance-required labels (NM-5.10). */
  required: string[];
  /** uids of pods holding implicit locks on held providers: the wave wait ends when one leaves. */
  holders: string[];
  /** One message per dependency cycle (pods that each require what another provides): reported, never broken by Slipway. */
  cycles: string[];
}

export const NO_LOCKS: LockVerdict = { held: new Map(), promoted: [], required: [], holders: [], cycles: [] };
const finished = (p: PodVerdict) => p.phase === 'Succeeded' || p.phase === 'Failed';

interface Hold {
  component: string;
  explicit: string[];
  pods: PodVerdict[];
}

/**
 * The wave with locks applied: `plan.toEvict` gains the promoted pods (and `later` loses them); held
 * providers stay in `toEvict`, so the wave is not done, and the caller must not evict them.
 * `pods` is every pod the drain still considers on the node, targeted or not.
 */
export function applyLocks(plan: WavePlan, pods: PodVerdict[], locks: Record<string, string[]> | undefined, skippedBySignal: ReadonlySet<string>): { plan: WavePlan; locks: LockVerdict } {
  if (!pods.some((p) => p.provides) || plan.done) return { plan, locks: NO_LOCKS };
  // A pod in a terminal phase has left in every sense that matters (NM-5.5): it holds nothing.
  const live = pods.filter((p) => !finished(p));
  const due = new Map(plan.toEvict.map((p) => [p.uid, p]));
  const holds = new Map<string, Hold[]>();
  const promoted: LockVerdict['promoted'] = [];
  const promotable = (q: PodVerdict) => q.action === 'Evict' && !q.kept && !q.terminating && !skippedBySignal.has(podKey(q)) && !due.has(q.uid);
  // Until nothing new is promoted: a promoted pod may itself provide something another pod requires.
  for (let changed = true; changed; ) {
    changed = false;
    for (const provider of [...due.values()]) {
      if (!provider.provides || holds.has(provider.uid)) continue;
      const mine: Hold[] = provider.provides
        .map((component) => ({ component, explicit: locks?.[component] ?? [], pods: live.filter((q) => q.uid !== provider.uid && q.requires?.includes(component)) }))
        .filter((h) => h.explicit.length || h.pods.length);
      if (!mine.length) continue;
      holds.set(provider.uid, mine);
      for (const h of mine) {
        for (const q of h.pods.filter(promotable)) {
          due.set(q.uid, q);
          promoted.push({ pod: q, message: `evicted ahead of the drain plan: requires ${h.component} provided by ${podKey(provider)}` });
          changed = true;
        }
      }
    }
  }
  const inCycle = cycleGroups(holds, due);
  const held = new Map<string, string>();
  for (const [uid, mine] of holds) held.set(uid, inCycle.get(uid) ?? heldReason(mine));
  const promotedUids = new Set(promoted.map((x) => x.pod.uid));
  return {
    plan: {
      ...plan,
      toEvict: [...plan.toEvict, ...promoted.map((x) => x.pod)],
      later: plan.later.map((l) => ({ ...l, pods: l.pods.filter((p) => !promotedUids.has(p.uid)) })).filter((l) => l.pods.length),
    },
    locks: {
      held,
      promoted,
      required: [...new Set([...holds.values()].flat().map((h) => h.component))].sort(),
      holders: [...new Set([...holds.values()].flat().flatMap((h) => h.pods.map((p) => p.uid)))].sort(),
      cycles: [...new Set(inCycle.values())].sort(),
    },
  };
}

/** "held by dependency lock l2-agent (holders: nova-compute, pod app/nova)" (E5 b). */
function heldReason(mine: Hold[]): string {
  const parts = mine.map((h) => `${h.component} (holders: ${[...h.explicit, ...h.pods.map((p) => `pod ${podKey(p)}`)].join(', ')})`);
  return `held by dependency lock${parts.length > 1 ? 's' : ''} ${parts.join('; ')}`;
}

/**
 * Held providers that wait for each other: P waits for Q when Q requires a component of P, and Q is
 * itself held. Slipway never breaks a cycle (it cannot know which side may lose data): each member is
 * reported with the whole cycle, until someone removes an annotation or force-deletes a pod.
 */
function cycleGroups(holds: Map<string, Hold[]>, due: Map<string, PodVerdict>): Map<string, string> {
  const waitsFor = new Map<string, Array<{ on: PodVerdict; component: string }>>();
  for (const [uid, mine] of holds) {
    waitsFor.set(uid, mine.flatMap((h) => h.pods.filter((q) => holds.has(q.uid)).map((q) => ({ on: q, component: h.component }))));
  }
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length) for (const e of waitsFor.get(stack.pop()!) ?? []) if (!seen.has(e.on.uid)) seen.add(e.on.uid), stack.push(e.on.uid);
    return seen;
  };
  const reachable = new Map([...holds.keys()].map((uid) => [uid, reach(uid)]));
  const out = new Map<string, string>();
  for (const uid of holds.keys()) {
    if (out.has(uid) || !reachable.get(uid)!.has(uid)) continue;
    const group = [...holds.keys()].filter((v) => reachable.get(uid)!.has(v) && reachable.get(v)!.has(uid));
    const links = group
      .flatMap((v) => (waitsFor.get(v) ?? []).filter((e) => group.includes(e.on.uid)).map((e) => `${podKey(e.on)} requires ${e.component} provided by ${podKey(due.get(v)!)}`))
      .sort();
    const message = `dependency cycle: ${links.join('; ')}; none can leave first: remove a ${REQUIRES_ANNOTATION} annotation or force-delete one of them`;
    for (const v of group) out.set(v, message);
  }
  return out;
}
