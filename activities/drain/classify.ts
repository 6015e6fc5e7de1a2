// Pod classification: a chain of small filters, first verdict wins (after Cluster API's drain).
// Each filter looks at one pod and either decides (action + order + reason) or passes. Warnings
// (emptyDir, no controller) are collected for pods that are drained. Pure: the snapshot activity
// gathers the facts (DaemonSets, namespaces, rules) and calls classifyPod.
import { parseComponents, PROVIDES_ANNOTATION, REQUIRES_ANNOTATION } from '../../api/dependency-locks.js';
import { evacuatorsOf } from '../../api/evacuation.js';
import type { DrainPlanEntry } from '../../api/drain-options.js';
import { DRAIN_LABEL, POD_TYPE_LABEL, targeted as matchesLane, type Lane } from '../../api/drain-plan.js';
import type { DrainRule } from '../../api/drain-rule.js';
import { matchesSelector } from '../../api/label-selector.js';
import { UNREACHABLE_TERMINATING_SKIP_MS, type PodAction, type PodType, type PodVerdict } from '../../shared/drain.js';

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

export interface PodFacts {
  namespace: string;
  name: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  phase: string;
  deletionTimestampMs?: number;
  controller?: { kind: string; name: string; apiVersion: string };
  hasEmptyDir: boolean;
  claims: string[];
  priority: number;
  /** Tolerates node.kubernetes.io/unschedulable (by key, or every taint): its replacement may land back here. */
  toleratesUnschedulable: boolean;
  /** The pod's own node, when its scheduling constraints pin it there (NM-6.6 (c)); undefined otherwise. */
  pinnedTo?: string;
}

export interface ClassifyContext {
  nodeLabels: Record<string, string>;
  unreachable: boolean;
  nowMs: number;
  daemonSetExists(namespace: string, name: string): boolean;
  namespaceLabels(namespace: string): Record<string, string> | undefined;
  /** Valid rules, sorted by name. */
  rules: DrainRule[];
  drainPlan?: DrainPlanEntry[];
  /**
   * Targets mode (a NodeMaintenance drain): only pods matching one of these lanes may leave; the
   * rest are left alone. `drainPlan` is then ignored: DrainRule orders give the sub-waves (NM-7.3).
   */
  targets?: Lane[];
}

interface Decision {
  action: PodAction;
  reason: string;
  /** From a Drain rule; WaitCompleted and default pods are order 0. */
  order?: number;
}
type Filter = (pod: PodFacts, ctx: ClassifyContext, type: PodType) => Decision | undefined;

const finished = (p: PodFacts) => p.phase === 'Succeeded' || p.phase === 'Failed';

const isAppsDaemonSetPod = (p: PodFacts) => p.controller?.kind === 'DaemonSet' && p.controller.apiVersion.startsWith('apps/');

/**
 * Which NM-6.6 rule makes a pod daemon-like beyond (a) an apps/DaemonSet: (b) the pod-type label, or
 * (c) a custom controller's pod pinned to its node that tolerates the cordon (yaook's ConfiguredDaemonSets).
 */
export function daemonLikeRule(p: PodFacts): string | undefined {
  if (isAppsDaemonSetPod(p)) return undefined;
  const label = p.labels[POD_TYPE_LABEL];
  if (label === 'DaemonSet') return `daemon-like: label ${POD_TYPE_LABEL}=DaemonSet`;
  if (label === 'Default' || !p.controller || p.pinnedTo === undefined || !p.toleratesUnschedulable) return undefined;
  return `daemon-like: pinned to ${p.pinnedTo}, tolerates unschedulable (${p.controller.kind} ${p.controller.name})`;
}

export function podTypeOf(p: PodFacts): PodType {
  if (p.annotations[MIRROR_ANNOTATION] !== undefined) return 'Static';
  if (isAppsDaemonSetPod(p) || daemonLikeRule(p) !== undefined) return 'DaemonSet';
  return 'Default';
}

/** Only (a) needs its controller to exist: an orphaned apps/DaemonSet pod is Default (evicted with a warning). */
const orphaned = (p: PodFacts, ctx: ClassifyContext) => isAppsDaemonSetPod(p) && !ctx.daemonSetExists(p.namespace, p.controller!.name);

const planHas = (ctx: ClassifyContext, t: PodType) => (ctx.drainPlan ?? []).some((e) => e.podType === t);

const skipTerminatingOnUnreachableNode: Filter = (p, ctx) =>
  ctx.unreachable && p.deletionTimestampMs !== undefined && ctx.nowMs - p.deletionTimestampMs > UNREACHABLE_TERMINATING_SKIP_MS
    ? { action: 'Skip', reason: 'terminating on an unreachable node' }
    : undefined;

const daemonSetPods: Filter = (p, ctx, type) => {
  if (type !== 'DaemonSet') return undefined;
  if (finished(p)) return undefined; // a finished pod holds nothing: deleted below, as kubectl and Cluster API do
  if (orphaned(p, ctx)) return undefined; // orphaned: drained, with a warning
  if (planHas(ctx, 'DaemonSet')) return undefined; // a drain plan names DaemonSet pods explicitly
  return { action: 'Skip', reason: daemonLikeRule(p) ?? 'DaemonSet-managed' };
};

const mirrorPods: Filter = (_p, ctx, type) =>
  type === 'Static' && !planHas(ctx, 'Static') ? { action: 'Skip', reason: 'static (mirror) pod' } : undefined;

const drainLabel: Filter = (p) => {
  const v = p.labels[DRAIN_LABEL];
  if (v === undefined) return undefined;
  const norm = v.toLowerCase().replace('-', '');
  if (norm === 'skip') return { action: 'Skip', reason: `label ${DRAIN_LABEL}=${v}` };
  if (norm === 'waitcompleted') return { action: 'WaitCompleted', reason: `label ${DRAIN_LABEL}=${v}` };
  return undefined; // unknown value: reported as a warning, rules decide
};

const drainRules: Filter = (p, ctx) => {
  for (const rule of ctx.rules) {
    if (!ruleMatchesNode(rule, ctx.nodeLabels) || !ruleMatchesPod(rule, p, ctx)) continue;
    const { behavior, order } = rule.spec.drain;
    return { action: behavior === 'Drain' ? 'Evict' : behavior, order: behavior === 'Drain' ? order ?? 0 : 0, reason: `DrainRule ${rule.name}` };
  }
  return undefined;
};

const FILTERS: Filter[] = [skipTerminatingOnUnreachableNode, daemonSetPods, mirrorPods, drainLabel, drainRules];

export function ruleMatchesNode(rule: DrainRule, nodeLabels: Record<string, string>): boolean {
  const entries = rule.spec.nodes ?? [];
  return entries.length === 0 || entries.some((e) => matchesSelector(e.selector, nodeLabels));
}

export function ruleMatchesPod(rule: DrainRule, p: PodFacts, ctx: ClassifyContext): boolean {
  const entries = rule.spec.pods ?? [];
  if (entries.length === 0) return true;
  return entries.some(
    (e) =>
      matchesSelector(e.selector, p.labels) &&
      (!e.namespaceSelector || matchesSelector(e.namespaceSelector, ctx.namespaceLabels(p.namespace) ?? {})),
  );
}

/** Index of the first drain-plan entry that takes this pod, or undefined. */
export function planIndex(plan: DrainPlanEntry[], p: PodFacts, type: PodType): number | undefined {
  const i = plan.findIndex(
    (e) => e.podType === type && (e.podPriority === undefined || p.priority <= e.podPriority) && matchesSelector(e.podSelector, p.labels),
  );
  return i >= 0 ? i : undefined;
}

function warningsFor(p: PodFacts, type: PodType, ctx: ClassifyContext, action: PodAction): string[] {
  const w: string[] = [];
  if (finished(p) || action !== 'Evict') return w;
  if (type === 'DaemonSet' && orphaned(p, ctx)) w.push('evicting orphaned DaemonSet-managed Pod');
  if (p.hasEmptyDir) w.push('evicting Pod with local storage (emptyDir)');
  if (!p.controller) w.push('evicting Pod that has no controller');
  const label = p.labels[DRAIN_LABEL];
  if (label !== undefined && !['skip', 'waitcompleted'].includes(label.toLowerCase().replace('-', ''))) {
    w.push(`unknown value "${label}" of label ${DRAIN_LABEL} ignored`);
  }
  return w;
}

/** Why a targeted DaemonSet or static pod stays (NM-6.7): no evacuator exists yet, so node shutdown removes it. */
export const keptReason = (type: 'DaemonSet' | 'Static') => `${type} pod without evacuator: left for node shutdown`;

const TARGETS_FILTERS: Filter[] = [skipTerminatingOnUnreachableNode, drainLabel, drainRules];

/**
 * Targets mode: skip label and rules as always (NM-7.1), then the lanes decide. A pod matching no
 * lane is left alone (`targeted: false`, keeping its action for the day it is targeted); a targeted
 * DaemonSet or static pod is never evicted (NM-6.7): Kept. Targeted WaitCompleted pods are waited for
 * (NM-7.2); DrainRule orders are the sub-waves inside the targets (NM-7.3).
 */
function classifyForTargets(p: PodFacts, ctx: ClassifyContext, lanes: Lane[]): PodVerdict {
  const found = podTypeOf(p);
  // An orphaned DaemonSet pod is Default (its DaemonSet must exist): evicted with a warning, as today.
  const type: PodType = found === 'DaemonSet' && orphaned(p, ctx) ? 'Default' : found;
  const targeted = matchesLane(lanes, { podType: type, priority: p.priority, labels: p.labels });
  let d: Decision = { action: 'Evict', order: 0, reason: 'default' };
  for (const f of TARGETS_FILTERS) {
    const r = f(p, ctx, type);
    if (r) {
      d = r;
      break;
    }
  }
  let kept = false;
  if (d.action !== 'Skip' && type !== 'Default' && targeted && evacuatorsOf(p.annotations).evacuators.length) {
    // NM-5.8: an evacuator is the one way a DaemonSet or static pod leaves; without one left it is kept after all.
    d = { action: 'Evict', order: d.order ?? 0, reason: `${type} pod with evacuator: evacuated, never evicted` };
  } else if (d.action !== 'Skip' && type !== 'Default' && targeted) {
    kept = true;
    const rule = daemonLikeRule(p);
    d = { action: 'Skip', reason: rule ? `${keptReason(type)} (${rule})` : keptReason(type) };
  }
  if (targeted && finished(p) && (d.action === 'Evict' || d.action === 'WaitCompleted')) d = { action: 'Delete', reason: `finished (${p.phase})`, order: d.order };
  return {
    ...verdict(p, type, d, d.action === 'Skip' ? 0 : d.order ?? 0, targeted ? warningsFor(p, found, ctx, d.action) : []),
    targeted,
    ...(kept ? { kept } : {}),
    // The maintenance passes plan entries below every untargeted pod at once (A3): it needs their priority.
    ...(!targeted ? { priority: p.priority } : {}),
  };
}

/** What a pod declares to the drain: dependency locks (NM-5.9) and evacuators (spec §5), only when it has any: most pods have none. */
function declarations(p: PodFacts): Pick<PodVerdict, 'provides' | 'requires' | 'evacuators'> & { warnings: string[] } {
  const provides = parseComponents(PROVIDES_ANNOTATION, p.annotations[PROVIDES_ANNOTATION]);
  const requires = parseComponents(REQUIRES_ANNOTATION, p.annotations[REQUIRES_ANNOTATION]);
  const evac = evacuatorsOf(p.annotations);
  // An invalid registration is reported; with no valid evacuator left the pod is evicted as any other.
  const evacWarnings = evac.invalid.map((w) => `${w}; ${evac.evacuators.length ? 'ignored' : 'the pod is evicted instead'}`);
  return {
    ...(provides.components.length ? { provides: provides.components } : {}),
    ...(requires.components.length ? { requires: requires.components } : {}),
    ...(evac.evacuators.length ? { evacuators: evac.evacuators.map((e) => e.name) } : {}),
    warnings: [...provides.warnings, ...requires.warnings, ...evacWarnings],
  };
}

function verdict(p: PodFacts, type: PodType, d: Decision, order: number, warnings: string[]): PodVerdict {
  const { warnings: declared, ...deps } = declarations(p);
  return {
    namespace: p.namespace,
    name: p.name,
    uid: p.uid,
    action: d.action,
    order,
    podType: type,
    reason: d.reason,
    warnings: [...warnings, ...declared],
    terminating: p.deletionTimestampMs !== undefined,
    phase: p.phase,
    claims: p.claims,
    controller: p.controller ? `${p.controller.kind} ${p.namespace}/${p.controller.name}` : undefined,
    toleratesUnschedulable: p.toleratesUnschedulable,
    ...deps,
  };
}

export function classifyPod(p: PodFacts, ctx: ClassifyContext): PodVerdict {
  if (ctx.targets) return classifyForTargets(p, ctx, ctx.targets);
  const type = podTypeOf(p);
  let d: Decision = { action: 'Evict', order: 0, reason: 'default' };
  for (const f of FILTERS) {
    const r = f(p, ctx, type);
    if (r) {
      d = r;
      break;
    }
  }
  let order = d.order ?? 0;
  if (d.action !== 'Skip' && ctx.drainPlan) {
    // KEP-4212: the plan's entry index is the wave. Default pods outside every entry go last.
    const i = planIndex(ctx.drainPlan, p, type);
    if (i === undefined && type !== 'Default' && !finished(p)) d = { action: 'Skip', reason: `${type} pod matches no drainPlan entry` };
    order = i ?? ctx.drainPlan.length;
  }
  // A finished pod holds nothing: delete it rather than evict it or wait for it.
  if (finished(p) && (d.action === 'Evict' || d.action === 'WaitCompleted')) d = { action: 'Delete', reason: `finished (${p.phase})` };
  return verdict(p, type, d, d.action === 'Skip' ? 0 : order, warningsFor(p, type, ctx, d.action));
}
