// Pending: validate the request against the cluster and the cloud, pick the nodes to cycle, and
// heal what an earlier run left behind (instances detached but never terminated). Safe to repeat.
import { PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { CycleNodeRequestSpec, nodeGroupsOf, type CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { parseDuration } from '../../api/duration.js';
import { selectorToString } from '../../api/label-selector.js';
import { apiStatus, type Kube } from '../kube.js';
import type { NodeGroupProvider } from '../providers/types.js';
import { CYCLED_BY, DETACHED_FROM } from './markers.js';
import { setUnschedulable } from '../drain/node.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface CycleNode {
  name: string;
  providerID: string;
  nodeGroup: string;
  ready: boolean;
  cordoned: boolean;
  internalIP?: string;
  createdAtMs: number;
}

export interface ResolvedCycle {
  /** Problems that make the request invalid: nothing was touched. */
  errors: string[];
  warnings: string[];
  provider: string;
  groups: string[];
  /** Nodes to cycle, sorted by name. */
  nodes: CycleNode[];
  /** Providers IDs of Nodes (matching the selector) without an instance in the groups, and the reverse. */
  mismatch: { nodesWithoutInstance: string[]; instancesWithoutNode: string[] };
  reattached: string[];
  settings: {
    method: 'Drain' | 'Wait';
    concurrency: number;
    cyclingTimeoutMs: number;
    labelsToRemove: string[];
    ignorePodsLabels: Record<string, string[]>;
    ignoreNamespaces: string[];
  };
}

export function nodeSummary(n: V1Node): CycleNode {
  return {
    name: n.metadata!.name!,
    providerID: n.spec?.providerID ?? '',
    nodeGroup: '',
    ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    cordoned: n.spec?.unschedulable === true,
    internalIP: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address,
    createdAtMs: n.metadata?.creationTimestamp ? new Date(n.metadata.creationTimestamp).getTime() : 0,
  };
}

export function createResolveActivities(kube: Kube, providers: Record<string, NodeGroupProvider>, defaultProvider: string) {
  return {
    async resolveCycle(input: { spec: CycleNodeRequestSpecInput; requestKey: string }): Promise<ResolvedCycle> {
      const empty = (errors: string[], provider = defaultProvider): ResolvedCycle => ({
        errors, warnings: [], provider, groups: [], nodes: [], mismatch: { nodesWithoutInstance: [], instancesWithoutNode: [] }, reattached: [],
        settings: { method: 'Drain', concurrency: 1, cyclingTimeoutMs: 0, labelsToRemove: [], ignorePodsLabels: {}, ignoreNamespaces: [] },
      });
      const parsed = CycleNodeRequestSpec.safeParse(input.spec);
      if (!parsed.success) return empty(parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`));
      const spec = parsed.data;
      const providerName = spec.provider ?? defaultProvider;
      const provider = providers[providerName];
      if (!provider) return empty([`unknown provider ${providerName}`], providerName);
      const groups = nodeGroupsOf(spec);

      let described;
      try {
        described = await provider.describeGroups(groups);
      } catch (err) {
        if ((err as Error).name === 'UnknownNodeGroupError') return empty([(err as Error).message], providerName);
        throw err; // transient: the activity is retried
      }
      const groupOf = new Map(described.flatMap((g) => g.instances.map((i) => [i.providerID, g.name] as const)));

      // Heal first: nodes an earlier run detached from these groups and never terminated go back.
      const reattached: string[] = [];
      const all = await kube.core.listNode();
      for (const n of all.items) {
        const from = n.metadata?.annotations?.[DETACHED_FROM];
        const pid = n.spec?.providerID;
        if (!from || !groups.includes(from) || !pid || groupOf.has(pid)) continue;
        if (n.metadata?.annotations?.[CYCLED_BY] === input.requestKey) continue; // ours, in flight (a retry)
        if ((await provider.instancesExist([pid])).has(pid)) {
          await provider.attachInstance(pid, from);
          reattached.push(n.metadata!.name!);
        }
        await kube.core.patchNode(
          { name: n.metadata!.name!, body: { metadata: { annotations: { [DETACHED_FROM]: null, [CYCLED_BY]: null } } } },
          mergePatch,
        ).catch((err) => { if (apiStatus(err) !== 404) throw err; });
        await setUnschedulable(kube, n.metadata!.name!, false);
      }
      if (reattached.length) described = await provider.describeGroups(groups);
      const inGroups = new Map(described.flatMap((g) => g.instances.map((i) => [i.providerID, g.name] as const)));

      const selected = (await kube.core.listNode({ labelSelector: selectorToString(spec.selector) })).items.map(nodeSummary);
      const errors: string[] = [];
      const warnings: string[] = [];
      if (selected.length === 0) errors.push(`selector ${selectorToString(spec.selector)} matches no node`);
      const byProvider = new Map(selected.map((n) => [n.providerID, n]));
      const mismatch = {
        nodesWithoutInstance: selected.filter((n) => !inGroups.has(n.providerID)).map((n) => n.name).sort(),
        instancesWithoutNode: [...inGroups.keys()].filter((p) => !byProvider.has(p)).sort(),
      };
      let nodes = selected.filter((n) => inGroups.has(n.providerID)).map((n) => ({ ...n, nodeGroup: inGroups.get(n.providerID)! }));
      if (spec.nodeNames?.length) {
        const names = new Set(nodes.map((n) => n.name));
        const missing = spec.nodeNames.filter((n) => !names.has(n));
        if (missing.length && !spec.validationOptions?.skipMissingNamedNodes) errors.push(`named nodes not found in the selection: ${missing.join(', ')}`);
        else if (missing.length) warnings.push(`skipping missing named nodes: ${missing.join(', ')}`);
        nodes = nodes.filter((n) => spec.nodeNames!.includes(n.name));
      }
      nodes.sort((a, b) => (a.name < b.name ? -1 : 1));
      const s = spec.cycleSettings;
      return {
        errors, warnings, provider: providerName, groups, nodes, mismatch, reattached,
        settings: {
          method: s.method,
          concurrency: s.concurrency ?? Math.max(1, nodes.length),
          cyclingTimeoutMs: parseDuration(s.cyclingTimeout),
          labelsToRemove: s.labelsToRemove ?? [],
          ignorePodsLabels: s.ignorePodsLabels ?? {},
          ignoreNamespaces: s.ignoreNamespaces ?? [],
        },
      };
    },
  };
}
