// The wave planner: given every pod on the node and its verdict, what happens now. Pods leave in
// waves by order, lowest first; a wave starts only when every pod of a lower order (WaitCompleted
// and still-terminating pods included) has left the node. Pure and deterministic: the workflow runs
// it on each snapshot. The same planner serves DrainRule orders and KEP-4212 drain plans, because
// both arrive here as `order`.
import { byKey, podKey, type PodVerdict } from '../../shared/drain.js';

export interface WavePlan {
  /** Nothing left to evict, delete or wait for. */
  done: boolean;
  /** The order of the current wave. */
  order?: number;
  /** Evict now: current wave, not yet terminating. */
  toEvict: PodVerdict[];
  /** Delete now (finished pods): current wave, not yet terminating. */
  toDelete: PodVerdict[];
  /** Current wave (or lower), deletionTimestamp set, still on the node. */
  terminating: PodVerdict[];
  /** Current wave, waiting to complete on their own; never evicted. */
  waitingCompletion: PodVerdict[];
  /** Pods of higher orders, by order. */
  later: Array<{ order: number; pods: PodVerdict[] }>;
  skipped: PodVerdict[];
}

export interface PlanOverrides {
  /** ns/name of pods an operator told the drain to leave alone. */
  skipped: ReadonlySet<string>;
}

export function planWave(pods: PodVerdict[], overrides: PlanOverrides = { skipped: new Set() }): WavePlan {
  const sorted = [...pods].sort(byKey);
  const skipped = sorted.filter((p) => p.action === 'Skip' || overrides.skipped.has(podKey(p)));
  const active = sorted.filter((p) => p.action !== 'Skip' && !overrides.skipped.has(podKey(p)));
  const empty: WavePlan = { done: true, toEvict: [], toDelete: [], terminating: [], waitingCompletion: [], later: [], skipped };
  if (active.length === 0) return empty;
  const order = Math.min(...active.map((p) => p.order));
  const now = active.filter((p) => p.order === order);
  const laterByOrder = new Map<number, PodVerdict[]>();
  for (const p of active.filter((p) => p.order > order)) laterByOrder.set(p.order, [...(laterByOrder.get(p.order) ?? []), p]);
  return {
    done: false,
    order,
    toEvict: now.filter((p) => p.action === 'Evict' && !p.terminating),
    toDelete: now.filter((p) => p.action === 'Delete' && !p.terminating),
    terminating: now.filter((p) => p.terminating),
    waitingCompletion: now.filter((p) => p.action === 'WaitCompleted' && !p.terminating),
    later: [...laterByOrder.entries()].sort(([a], [b]) => a - b).map(([o, ps]) => ({ order: o, pods: ps })),
    skipped,
  };
}
