// KEP-4212 drain-plan arithmetic, pure and shared: the CRD's defaulting and ordering rule, the
// bridge's checks, the maintenance planner (workflows) and pod classification (activities) all
// use these definitions, so "which pods does this entry take, and in what order" has one answer.
import { matchesSelector } from './label-match.js';
import type { LabelSelector } from './label-selector.js';
import { canonical } from './canonical.js';

/** The pod label that overrides DrainRules: skip | wait-completed. */
export const DRAIN_LABEL = 'slipway.dev/drain';
/** The pod label that declares a pod's type (NM-6.6): DaemonSet makes it daemon-like, Default opts it out of rule (c). */
export const POD_TYPE_LABEL = 'slipway.dev/pod-type';

export type PodType = 'Default' | 'DaemonSet' | 'Static';
export const POD_TYPES: readonly PodType[] = ['Default', 'DaemonSet', 'Static'];
const TYPE_RANK: Record<PodType, number> = { Default: 0, DaemonSet: 1, Static: 2 };

/** A plan entry with its defaults applied (NodeMaintenance requires podPriority). */
export interface PlanEntry {
  podType: PodType;
  podPriority: number;
  podSelector?: LabelSelector;
}

/** A drain target lane has the plan entry's shape (the KEP's drainTargets list). */
export type Lane = PlanEntry;

export const MAX_PRIORITY = 2147483647;
/** The KEP's default priorities: highest user priority, system-cluster-critical, system-node-critical, MAX. */
export const DEFAULT_PRIORITIES = [1000000000, 2000000000, 2000001000, MAX_PRIORITY] as const;

/** The 12 default entries, in order: each default priority for Default, then DaemonSet, then Static. */
export const DEFAULT_DRAIN_PLAN: readonly PlanEntry[] = POD_TYPES.flatMap((podType) => DEFAULT_PRIORITIES.map((podPriority) => ({ podType, podPriority })));

// Selectors are compared in every planner evaluation (per node, per holder): cache their keys by
// identity. Callers never mutate a selector after it is built.
const keys = new WeakMap<object, string>();

/** Canonical JSON of a selector (sorted keys, requirement values as written); '' for none. */
export function selectorKey(sel: LabelSelector | undefined): string {
  if (!sel) return '';
  let k = keys.get(sel);
  if (k === undefined) keys.set(sel, (k = canonical(sel)));
  return k;
}

/**
 * key(e) compared: type rank, then podPriority, then entries with a selector before the one without.
 * `withSelectorTie` also orders different selectors (for comparing frontiers of different plans).
 */
export function compareEntries(a: PlanEntry, b: PlanEntry, withSelectorTie = false): number {
  const d = TYPE_RANK[a.podType] - TYPE_RANK[b.podType] || a.podPriority - b.podPriority || (a.podSelector ? 0 : 1) - (b.podSelector ? 0 : 1);
  if (d !== 0 || !withSelectorTie) return d;
  const ka = selectorKey(a.podSelector);
  const kb = selectorKey(b.podSelector);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export const sameEntry = (a: PlanEntry, b: PlanEntry) => a.podType === b.podType && a.podPriority === b.podPriority && selectorKey(a.podSelector) === selectorKey(b.podSelector);

/** The first ordering problem of a written plan (NM-4.4, NM-4.5), or undefined. */
export function planOrderError(plan: readonly PlanEntry[]): string | undefined {
  for (let i = 1; i < plan.length; i++) {
    const c = compareEntries(plan[i - 1]!, plan[i]!);
    if (c > 0) {
      return `spec.drainPlan[${i}]: entries must be ordered Default, DaemonSet, Static, then by podPriority ascending, with podSelector entries before the entry without one at equal priority`;
    }
  }
  for (let i = 0; i < plan.length; i++) {
    for (let j = 0; j < i; j++) if (sameEntry(plan[j]!, plan[i]!)) return `spec.drainPlan[${i}]: Duplicate entries are not allowed`;
  }
  return undefined;
}

/** The effective plan (NM-1.5): the written plan plus every default entry it lacks, sorted by key (stable). */
export function effectivePlan(plan: readonly PlanEntry[] | undefined): PlanEntry[] {
  const out = [...(plan ?? [])];
  for (const d of DEFAULT_DRAIN_PLAN) if (!out.some((e) => sameEntry(e, d))) out.push({ ...d });
  return out
    .map((e, i) => ({ e, i }))
    .sort((a, b) => compareEntries(a.e, b.e) || a.i - b.i)
    .map((x) => x.e);
}

/** The pod facts a plan entry looks at. */
export interface PlanPod {
  podType: PodType;
  priority: number;
  labels: Record<string, string>;
}

/** Pod matches entry (or lane): same type, priority ≤ podPriority, selector absent or matching. */
export const entryMatches = (e: PlanEntry, p: PlanPod): boolean =>
  e.podType === p.podType && p.priority <= e.podPriority && (!e.podSelector || matchesSelector(e.podSelector, p.labels));

/** A pod is targeted when it matches some lane. */
export const targeted = (lanes: readonly Lane[], p: PlanPod): boolean => lanes.some((l) => entryMatches(l, p));

/**
 * lanes(S): for each pod type with an entry in S, and each selector in {none} ∪ `selectors` of that
 * type, one lane whose priority is the highest among S's entries of that type with that selector
 * or none; a lane with no such entry is omitted. Sorted by compareLanes.
 */
export function lanes(reached: readonly PlanEntry[], selectors: readonly PlanEntry[] = []): Lane[] {
  const out: Lane[] = [];
  for (const podType of POD_TYPES) {
    const ofType = reached.filter((e) => e.podType === podType);
    if (!ofType.length) continue;
    const sels = new Map<string, LabelSelector | undefined>([['', undefined]]);
    for (const e of [...ofType, ...selectors.filter((s) => s.podType === podType)]) if (e.podSelector) sels.set(selectorKey(e.podSelector), e.podSelector);
    for (const [k, podSelector] of sels) {
      const prios = ofType.filter((e) => selectorKey(e.podSelector) === '' || selectorKey(e.podSelector) === k).map((e) => e.podPriority);
      if (!prios.length) continue;
      out.push(podSelector ? { podType, podPriority: Math.max(...prios), podSelector } : { podType, podPriority: Math.max(...prios) });
    }
  }
  return out.sort(compareLanes);
}

/**
 * Lane order in drainTargets: type, priority, then the lane without a selector before selector lanes
 * (canonical JSON). This follows the KEP's and the spec's examples ([D≤1000, D≤1000 app=postgres]);
 * plan entries (compareEntries) put selector entries first, because there order means eviction order.
 */
export function compareLanes(a: Lane, b: Lane): number {
  const d = TYPE_RANK[a.podType] - TYPE_RANK[b.podType] || a.podPriority - b.podPriority;
  if (d) return d;
  const ka = selectorKey(a.podSelector);
  const kb = selectorKey(b.podSelector);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** reached(T, e): T has a lane of e's type with selector none or e's and priority ≥ e's, or a lane of a higher type. */
export function reached(t: readonly Lane[], e: PlanEntry): boolean {
  return t.some(
    (l) =>
      TYPE_RANK[l.podType] > TYPE_RANK[e.podType] ||
      (l.podType === e.podType && l.podPriority >= e.podPriority && (!l.podSelector || selectorKey(l.podSelector) === selectorKey(e.podSelector))),
  );
}

/** "Default ≤ 10000", "Default ≤ 2000 app=postgres": for messages and Events. */
export function entryString(e: PlanEntry): string {
  const sel = e.podSelector ? ` ${selectorText(e.podSelector)}` : '';
  return `${e.podType} ≤ ${e.podPriority}${sel}`;
}

function selectorText(sel: LabelSelector): string {
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const r of sel.matchExpressions ?? []) parts.push(`${r.key} ${r.operator}${r.values?.length ? ` (${r.values.join(',')})` : ''}`);
  return parts.join(',');
}
