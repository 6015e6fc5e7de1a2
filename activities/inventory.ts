// Read-only view of the cluster's nodes, grouped by node group: the first thing every
// cycle or maintenance needs, and the end-to-end proof that the worker can reach the cluster.
import type { V1Node } from '@kubernetes/client-node';
import type { Kube } from '../kube/client.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';


export interface NodeSummary {
  name: string;
  nodeGroup?: string;
  providerID?: string;
  ready: boolean;
  cordoned: boolean;
}

export interface Inventory {
  nodes: NodeSummary[];
}

export function summarizeNode(node: V1Node): NodeSummary {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return {
    name: node.metadata?.name ?? '',
    nodeGroup: node.metadata?.labels?.[NODE_GROUP_LABEL],
    providerID: node.spec?.providerID,
    ready,
    cordoned: node.spec?.unschedulable === true,
  };
}

export function createInventoryActivities(kube: Kube) {
  return {
    /** Lists the nodes matching a label selector, sorted by name. Read-only, so trivially idempotent. */
    async listNodes(labelSelector?: string): Promise<Inventory> {
      const nodes: NodeSummary[] = [];
      let _continue: string | undefined;
      do {
        const page = await kube.core.listNode({ labelSelector, limit: 500, _continue });
        nodes.push(...page.items.map(summarizeNode));
        _continue = page.metadata?._continue;
      } while (_continue);
      nodes.sort((a, b) => a.name.localeCompare(b.name));
      return { nodes };
    },
  };
}
