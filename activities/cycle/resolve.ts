// Pending: validate the request against the cluster and the cloud, pick the nodes to cycle, and
// heal what an earlier run left behind (instances detached but never terminated). Safe to repeat.
// Everything that makes a request invalid is found here, before anything is touched: the spec
// (the same zod type admission and the bridge use), the provider, the groups, and a selector that
// picks nodes of another group.
import type { V1Node } from '@kubernetes/client-node';
import { issueMessages } from '../../api/admission.js';
import { CycleNodeRequestSpec, allAtOnce, nodeGroupsOf, type CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { parseDuration } from '../../api/duration.js';
import { selectorToString, type LabelSelector } from '../../api/label-selector.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import type { NodeGroupProvider } from '../providers/types.js';
import { CLEAR_DETACHED_FROM_GROUP, detachedFromGroup } from '../../api/node-groups.js';
import { setUnschedulable } from '../drain/node.js';
import { failpoint } from '../../shared/failpoint.js';
import { mergePatch } from '../../kube/patch.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

/** A Node of a cloud node group, as the cycle reads it: the selected nodes and their replacements. */
export interface GroupNode {
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
  nodes: GroupNode[];
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

export function groupNodeOf(n: V1Node): GroupNode {
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

/**
 * Selected Nodes whose instance exists but is in none of the named groups: the selector picks
 * another group's nodes, which no wait would change. Not counted: a Node without a providerID yet,
 * one being deleted, one whose instance is gone (the cloud and the cluster catching up, which the
 * equilibrium wait allows for), and one detached from a named group (healing or this cycle's own).
 */
async function nodesOutsideGroups(nodes: V1Node[], inGroups: Map<string, string>, groups: string[], provider: NodeGroupProvider): Promise<V1Node[]> {
  const candidates = nodes.filter((n) => {
    const pid = n.spec?.providerID;
    const detachedFrom = detachedFromGroup(n.metadata?.annotations);
    return pid && !inGroups.has(pid) && !n.metadata?.deletionTimestamp && !(detachedFrom && groups.includes(detachedFrom));
  });
  if (candidates.length === 0) return [];
  const live = await provider.instancesExist(candidates.map((n) => n.spec!.providerID!));
  return candidates.filter((n) => live.has(n.spec!.providerID!)).sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}

/** How many outside nodes a message names before "and N more". */
const OUTSIDE_NAMED = 5;

function outsideMessage(selector: LabelSelector, groups: string[], outside: V1Node[]): string {
  const named = outside.slice(0, OUTSIDE_NAMED).map((n) => {
    const group = n.metadata?.labels?.[NODE_GROUP_LABEL];
    return `${n.metadata!.name!}${group ? ` (node group ${group})` : ''}`;
  });
  const more = outside.length > OUTSIDE_NAMED ? ` and ${outside.length - OUTSIDE_NAMED} more` : '';
  const these = outside.length === 1 ? '1 node' : `${outside.length} nodes`;
  return `selector ${selectorToString(selector)} picks ${these} outside node group${groups.length > 1 ? 's' : ''} ${groups.join(', ')}: ${named.join(', ')}${more}`;
}

export function createResolveActivities(kube: Kube, providers: Record<string, NodeGroupProvider>, defaultProvider: string) {
  return {
    async resolveCycle(input: { spec: CycleNodeRequestSpecInput; requestKey: string }): Promise<ResolvedCycle> {
      const empty = (errors: string[], provider = defaultProvider): ResolvedCycle => ({
        errors, warnings: [], provider, groups: [], nodes: [], mismatch: { nodesWithoutInstance: [], instancesWithoutNode: [] }, reattached: [],
        settings: { method: 'Drain', concurrency: 1, cyclingTimeoutMs: 0, labelsToRemove: [], ignorePodsLabels: {}, ignoreNamespaces: [] },
      });
      const parsed = CycleNodeRequestSpec.safeParse(input.spec);
      if (!parsed.success) return empty(issueMessages(parsed.error));
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
        const from = detachedFromGroup(n.metadata?.annotations);
        const pid = n.spec?.providerID;
        if (!from || !groups.includes(from) || !pid || groupOf.has(pid)) continue;
        if (n.metadata?.annotations?.[CYCLED_BY] === input.requestKey) continue; // ours, in flight (a retry)
        if ((await provider.instancesExist([pid])).has(pid)) {
          await provider.attachInstance(pid, from);
          reattached.push(n.metadata!.name!);
        }
        // Uncordon before the claim goes (NM-7.7): a maintenance waiting for the node cordons it after.
        await setUnschedulable(kube, n.metadata!.name!, false);
        await kube.core.patchNode(
          { name: n.metadata!.name!, body: { metadata: { annotations: { ...CLEAR_DETACHED_FROM_GROUP, [CYCLED_BY]: null } } } },
          mergePatch,
        ).catch((err) => { if (apiStatus(err) !== 404) throw err; });
      }
      if (reattached.length) described = await provider.describeGroups(groups);
      const inGroups = new Map(described.flatMap((g) => g.instances.map((i) => [i.providerID, g.name] as const)));

      const selectedNodes = (await kube.core.listNode({ labelSelector: selectorToString(spec.selector) })).items;
      const selected = selectedNodes.map(groupNodeOf);
      const errors: string[] = [];
      const warnings: string[] = [];
      if (selected.length === 0) errors.push(`selector ${selectorToString(spec.selector)} matches no node`);
      const outside = await nodesOutsideGroups(selectedNodes, inGroups, groups, provider);
      if (outside.length) errors.push(outsideMessage(spec.selector, groups, outside));
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
      failpoint('worker.cycle.after-resolve');
      const s = spec.cycleSettings;
      return {
        errors, warnings, provider: providerName, groups, nodes, mismatch, reattached,
        settings: {
          method: s.method,
          concurrency: s.concurrency ?? allAtOnce(nodes.length),
          cyclingTimeoutMs: parseDuration(s.cyclingTimeout),
          labelsToRemove: s.labelsToRemove ?? [],
          ignorePodsLabels: s.ignorePodsLabels ?? {},
          ignoreNamespaces: s.ignoreNamespaces ?? [],
        },
      };
    },
  };
}
