// The classify activity: reads the node, its pods, the DrainRules and whatever the filters need,
// and returns one verdict per pod. Read-only, so retries are free. Invalid drain options are
// returned as errors (the workflow fails before it touches anything); invalid DrainRules that could
// decide about this node's pods are returned as `heldBy` (the workflow holds until they are fixed).
import { AppsV1Api, type KubernetesObject, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { nodeLocks } from '../../api/dependency-locks.js';
import { lifecycleHooks } from '../../api/lifecycle-hooks.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { claimantName } from '../cycle/markers.js';
import { DrainOptions, type DrainOptionsInput } from '../../api/drain-options.js';
import type { Lane } from '../../api/drain-plan.js';
import { parseDuration } from '../../api/duration.js';
import { parseDrainRule, type DrainRule } from '../../api/drain-rule.js';
import { byKey, type DrainSettings, type DrainSnapshot, type NodeFacts } from '../../shared/drain.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { classifyPod, type ClassifyContext, type PodFacts } from './classify.js';
import { isUnreachable } from './node.js';
import { freshNode, readNode } from '../node-cache.js';
import { listNodePods, podFacts } from './pods.js';
import { invalidRuleCouldAffect } from './rule-reach.js';
import { agreeingRules, drainRuleLister, rulesFingerprint } from './rules-cache.js';
import { failpoint } from '../../shared/failpoint.js';

export function nodeFacts(name: string, node: V1Node | undefined): NodeFacts {
  const locks = nodeLocks(node?.metadata?.annotations);
  const hooks = lifecycleHooks(node?.metadata?.annotations, 'pre-drain').owners;
  const claim = node?.metadata?.annotations?.[CYCLED_BY];
  return {
    name,
    exists: node !== undefined,
    unreachable: isUnreachable(node),
    cordoned: node?.spec?.unschedulable === true,
    ...(Object.keys(locks).length ? { locks } : {}),
    ...(hooks.length ? { preDrainHooks: hooks } : {}),
    ...(claim ? { claimedBy: claimantName(claim) } : {}),
  };
}

interface InvalidRule {
  spec: unknown;
  error: string;
}

/**
 * The DrainRules: from the process's cache when it agrees with `since` (what this drain judged by
 * last; nothing changed), else listed.
 */
async function readDrainRules(kube: Kube, since?: string): Promise<{ rules: DrainRule[]; invalid: InvalidRule[]; seen: string }> {
  let items = agreeingRules(kube, since) as Array<KubernetesObject & { spec?: unknown }> | undefined;
  if (!items) {
    try {
      items = (await drainRuleLister(kube)()).items;
    } catch (err) {
      if (apiStatus(err) === 404) return { rules: [], invalid: [], seen: rulesFingerprint([]) }; // CRD not installed: no rules
      throw err;
    }
  }
  const rules: DrainRule[] = [];
  const invalid: InvalidRule[] = [];
  for (const item of items) {
    const r = parseDrainRule(item);
    if (r.rule) rules.push(r.rule);
    else invalid.push({ spec: item.spec, error: r.error! });
  }
  rules.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  invalid.sort((a, b) => (a.error < b.error ? -1 : a.error > b.error ? 1 : 0));
  return { rules, invalid, seen: rulesFingerprint(items) };
}

const hasNamespaceSelector = (spec: unknown) =>
  Array.isArray((spec as { pods?: unknown })?.pods) && (spec as { pods: unknown[] }).pods.some((e) => (e as { namespaceSelector?: unknown })?.namespaceSelector);

export function drainSettings(o: DrainOptions): DrainSettings {
  return {
    podEvictionTimeoutMs: o.podEvictionTimeout ? parseDuration(o.podEvictionTimeout.after) : undefined,
    podEvictionTimeoutPolicy: o.podEvictionTimeout?.policy ?? 'Wait',
    volumeDetachTimeoutMs: o.volumeDetachTimeout ? parseDuration(o.volumeDetachTimeout) : undefined,
    evictionConcurrency: o.evictionConcurrency,
    evictionQPS: o.evictionQPS,
    ...(o.evacuationProgressDeadline ? { evacuationProgressDeadlineSeconds: Math.round(parseDuration(o.evacuationProgressDeadline) / 1000) } : {}),
  };
}

export interface ClassifyInput {
  nodeName: string;
  options?: DrainOptionsInput;
  targets?: Lane[];
  /** The DrainRules fingerprint the drain last judged by: the rules come from the process's cache when it agrees. */
  drainRulesSeen?: string;
}

export function createSnapshotActivities(kube: Kube) {
  const classify = nodeClassifier(kube);
  return {
    /** `targets`: targets mode (NodeMaintenance): only pods matching a lane may leave; options.drainPlan is ignored. */
    async classifyPods(input: ClassifyInput): Promise<DrainSnapshot> {
      const { snapshot } = await classify(input);
      failpoint('worker.drain.after-classify');
      return snapshot;
    },
  };
}

/** What a caller has just seen by watching (the wave wait): used instead of reading it again. */
export interface SeenState {
  node?: V1Node;
  pods?: V1Pod[];
}

/**
 * Reads and classifies one node's pods: the snapshot, plus the facts it was made from (the
 * maintenance preview needs each pod's priority and labels to name its plan entry).
 */
export function nodeClassifier(kube: Kube) {
  const apps = kube.config.makeApiClient(AppsV1Api);
  return async (input: ClassifyInput, seen?: SeenState): Promise<{ snapshot: DrainSnapshot; pods: PodFacts[] }> => {
    const parsed = DrainOptions.safeParse(input.options ?? {});
    // Three independent reads at once: one round trip, not two (a missing node wastes a list).
    // Any failed read throws (the activity retries): an error is never an empty list of pods.
    const [node, items, rulesRead] = await Promise.all([
      // A drain's first look (no baseline yet) reads the node itself: whether to cordon, its hooks and locks.
      seen?.node ?? (input.drainRulesSeen === undefined ? freshNode(kube, input.nodeName) : readNode(kube, input.nodeName)),
      seen?.pods ?? listNodePods(kube, input.nodeName).then((l) => l.items),
      readDrainRules(kube, input.drainRulesSeen),
    ]);
    const { rules, invalid } = rulesRead;
    const facts = nodeFacts(input.nodeName, node);
    if (!parsed.success) {
      return { snapshot: { node: facts, pods: [], errors: parsed.error.issues.map((i) => `drain options ${i.path.join('.')}: ${i.message}`), heldBy: [] }, pods: [] };
    }
    const settings = drainSettings(parsed.data);
    if (!node) return { snapshot: { node: facts, pods: [], errors: [], heldBy: [], settings }, pods: [] };
    const pods = items.map(podFacts);

    // Only what the filters will ask for: DaemonSets of the namespaces that have DaemonSet pods,
    // namespace labels only when a rule has a namespaceSelector.
    const dsNamespaces = [...new Set(pods.filter((p) => p.controller?.kind === 'DaemonSet').map((p) => p.namespace))];
    const daemonSets = new Set<string>();
    await Promise.all(
      dsNamespaces.map(async (namespace) => {
        const list = await apps.listNamespacedDaemonSet({ namespace });
        for (const ds of list.items) daemonSets.add(`${namespace}/${ds.metadata!.name}`);
      }),
    );
    const nsLabels = new Map<string, Record<string, string>>();
    if (rules.some((r) => (r.spec.pods ?? []).some((e) => e.namespaceSelector)) || invalid.some((r) => hasNamespaceSelector(r.spec))) {
      const list = await kube.core.listNamespace();
      for (const ns of list.items) nsLabels.set(ns.metadata!.name!, ns.metadata?.labels ?? {});
    }
    const nodeLabels = node.metadata?.labels ?? {};
    const live = pods.filter((p) => p.deletionTimestampMs === undefined);
    const heldBy = invalid.filter((r) => invalidRuleCouldAffect(r.spec, nodeLabels, live, (ns) => nsLabels.get(ns))).map((r) => r.error);
    const ctx: ClassifyContext = {
      nodeLabels,
      unreachable: facts.unreachable,
      nowMs: Date.now(),
      daemonSetExists: (ns, name) => daemonSets.has(`${ns}/${name}`),
      namespaceLabels: (ns) => nsLabels.get(ns),
      rules,
      ...(input.targets ? { targets: input.targets } : { drainPlan: parsed.data.drainPlan }),
    };
    return { snapshot: { node: facts, pods: pods.map((p) => classifyPod(p, ctx)).sort(byKey), errors: [], heldBy, settings, drainRulesSeen: rulesRead.seen }, pods };
  };
}
