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
import type { HealthCheck } from '../../api/cycle-node-request.js';
import { runHealthChecks } from './health.js';

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
  /**
   * The first page of the nodes to cycle (sorted by name, at most `limit`): the selection is a
   * cursor (#28), the rest come from nextNodes. `nodesTotal` counts them all.
   */
  nodes: GroupNode[];
  nodesTotal: number;
  /** When the selection was read: nodes created after it (replacements) are never selected. */
  resolvedAtMs: number;
  /**
   * Nodes (matching the selector) without an instance in the groups, and instances without a Node:
   * the first NAMED of each, and how many there are.
   */
  mismatch: { nodesWithoutInstance: string[]; instancesWithoutNode: string[]; nodesWithoutInstanceCount: number; instancesWithoutNodeCount: number };
  /** Nodes an earlier run left detached and this resolve put back (the first NAMED). */
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
/** How many nodes a list in the resolve's answer names (#28: an answer must not grow with the fleet). */
export const NAMED = 20;
/** Most nodes one page of the selection holds (resolveCycle's first, each nextNodes). */
export const NODES_PAGE_MAX = 500;

const few = (names: string[]) => (names.length <= NAMED ? names.join(', ') : `${names.slice(0, NAMED).join(', ')} and ${names.length - NAMED} more`);
const byName = (a: GroupNode, b: GroupNode) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Whether a node existed when the request resolved: created in a second before the resolve's
 * (creationTimestamp has no finer grain, so a replacement launched in the resolve's own second
 * would otherwise pass for an old node and be cycled itself).
 */
export const existedAt = (n: GroupNode, resolvedAtMs: number) => n.createdAtMs < Math.floor(resolvedAtMs / 1000) * 1000;

/** What a request selects: its selector (and nodeNames), in its groups. */
export interface Selection {
  spec: CycleNodeRequestSpecInput;
  /** Only nodes created at or before this (the resolve's time) are selected. */
  resolvedAtMs: number;
}

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
    async resolveCycle(input: { spec: CycleNodeRequestSpecInput; requestKey: string; limit?: number }): Promise<ResolvedCycle> {
      let resolvedAtMs = Date.now();
      const empty = (errors: string[], provider = defaultProvider): ResolvedCycle => ({
        errors, warnings: [], provider, groups: [], nodes: [], nodesTotal: 0, resolvedAtMs,
        mismatch: { nodesWithoutInstance: [], instancesWithoutNode: [], nodesWithoutInstanceCount: 0, instancesWithoutNodeCount: 0 }, reattached: [],
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

      // The selection: these nodes, never one created after (nextNodes). A node created in the
      // list's own second would not count as existing (existedAt): list again in the next second.
      let selectedNodes: V1Node[] = [];
      for (let i = 0; ; i++) {
        resolvedAtMs = Date.now();
        selectedNodes = (await kube.core.listNode({ labelSelector: selectorToString(spec.selector) })).items;
        if (i >= 3 || selectedNodes.every((n) => existedAt(groupNodeOf(n), resolvedAtMs))) break;
        await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 50));
      }
      const selected = selectedNodes.map(groupNodeOf);
      const errors: string[] = [];
      const warnings: string[] = [];
      if (selected.length === 0) errors.push(`selector ${selectorToString(spec.selector)} matches no node`);
      const outside = await nodesOutsideGroups(selectedNodes, inGroups, groups, provider);
      if (outside.length) errors.push(outsideMessage(spec.selector, groups, outside));
      const byProvider = new Map(selected.map((n) => [n.providerID, n]));
      const withoutInstance = selected.filter((n) => !inGroups.has(n.providerID)).map((n) => n.name).sort();
      const withoutNode = [...inGroups.keys()].filter((p) => !byProvider.has(p)).sort();
      const mismatch = {
        nodesWithoutInstance: withoutInstance.slice(0, NAMED),
        instancesWithoutNode: withoutNode.slice(0, NAMED),
        nodesWithoutInstanceCount: withoutInstance.length,
        instancesWithoutNodeCount: withoutNode.length,
      };
      let nodes = selected.filter((n) => inGroups.has(n.providerID) && existedAt(n, resolvedAtMs)).map((n) => ({ ...n, nodeGroup: inGroups.get(n.providerID)! }));
      if (spec.nodeNames?.length) {
        const names = new Set(nodes.map((n) => n.name));
        const missing = spec.nodeNames.filter((n) => !names.has(n));
        if (missing.length && !spec.validationOptions?.skipMissingNamedNodes) errors.push(`named nodes not found in the selection: ${few(missing)}`);
        else if (missing.length) warnings.push(`skipping missing named nodes: ${few(missing)}`);
        const named = new Set(spec.nodeNames);
        nodes = nodes.filter((n) => named.has(n.name));
      }
      nodes.sort(byName);
      failpoint('worker.cycle.after-resolve');
      const s = spec.cycleSettings;
      const limit = Math.max(1, Math.min(input.limit ?? NODES_PAGE_MAX, NODES_PAGE_MAX));
      return {
        errors, warnings, provider: providerName, groups, nodes: nodes.slice(0, limit), nodesTotal: nodes.length, resolvedAtMs, mismatch,
        reattached: reattached.slice(0, NAMED),
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

    /**
     * The next page of a request's selection (#28): its nodes after `after` in name order, at most
     * `limit` (≤ 500), that existed at the resolve (existedAt: a replacement is never taken). Nodes
     * that left the selection since the resolve are not listed.
     */
    async nextNodes(input: Selection & { after?: string; limit: number }): Promise<{ nodes: GroupNode[] }> {
      const limit = Math.max(1, Math.min(input.limit, NODES_PAGE_MAX));
      const nodes = (await selectionOf(input)).filter((n) => input.after === undefined || n.name > input.after);
      return { nodes: nodes.slice(0, limit) };
    },

    /**
     * The initial health checks over a request's selection, a page at a time (#28: the request
     * sends what it is about, not a list of the fleet). Failures: the first NAMED and a count.
     */
    async healthCheckSelection(input: Selection & { checks: HealthCheck[]; maxWaitMs: number }): Promise<{ passed: boolean; failures: string[] }> {
      const nodes = await selectionOf(input);
      const failures: string[] = [];
      let failed = 0;
      for (let i = 0; i < nodes.length; i += NODES_PAGE_MAX) {
        const r = await runHealthChecks(nodes.slice(i, i + NODES_PAGE_MAX), input.checks, input.maxWaitMs);
        failed += r.failures.length;
        failures.push(...r.failures.slice(0, NAMED - failures.length));
      }
      if (failed > failures.length) failures.push(`and ${failed - failures.length} more`);
      return { passed: failed === 0, failures };
    },
  };

  /** The request's selection now, in name order: selected Nodes in its groups, named ones only, created by the resolve. */
  async function selectionOf(input: Selection): Promise<GroupNode[]> {
    const spec = input.spec;
    const provider = providers[spec.provider ?? defaultProvider];
    if (!provider) throw new Error(`unknown provider ${spec.provider ?? defaultProvider}`);
    const described = await provider.describeGroups(nodeGroupsOf(spec));
    const inGroups = new Map(described.flatMap((g) => g.instances.map((i) => [i.providerID, g.name] as const)));
    const named = spec.nodeNames?.length ? new Set(spec.nodeNames) : undefined;
    const listed = (await kube.core.listNode({ labelSelector: selectorToString(spec.selector) })).items.map(groupNodeOf);
    return listed
      .filter((n) => inGroups.has(n.providerID) && existedAt(n, input.resolvedAtMs) && (!named || named.has(n.name)))
      .map((n) => ({ ...n, nodeGroup: inGroups.get(n.providerID)! }))
      .sort(byName);
  }
}
