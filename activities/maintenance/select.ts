// Which nodes a maintenance selects, and whether that is every node (NM-4.8). Read-only.
import { matchesNodeSelector } from '../../api/node-selector.js';
import type { NodeSelector } from '../../api/node-maintenance.js';
import type { V1Node } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';

const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';

export interface Selection {
  /** Selected node names, sorted. */
  nodes: string[];
  totalNodes: number;
  controlPlaneNodes: number;
  controlPlaneSelected: number;
  /** Asked with partitionBy (spec.rollout): each selected node's value of that label ("" without it). */
  partitions?: Record<string, string>;
}

/** The selection over these nodes (pure: the read and the selection watch share it). */
export function selectionOf(nodeSelector: NodeSelector, all: V1Node[], partitionBy?: string): Selection {
  const nodes = all.map((n) => ({ name: n.metadata!.name!, labels: n.metadata?.labels ?? {} }));
  const selected = nodes.filter((n) => matchesNodeSelector(nodeSelector, n));
  const cp = nodes.filter((n) => n.labels[CONTROL_PLANE_LABEL] !== undefined);
  return {
    nodes: selected.map((n) => n.name).sort(),
    totalNodes: nodes.length,
    controlPlaneNodes: cp.length,
    controlPlaneSelected: cp.filter((n) => selected.includes(n)).length,
    ...(partitionBy !== undefined ? { partitions: Object.fromEntries(selected.map((n) => [n.name, n.labels[partitionBy] ?? ''])) } : {}),
  };
}

export function createSelectActivities(kube: Kube) {
  return {
    async selectMaintenanceNodes(input: { nodeSelector: NodeSelector; partitionBy?: string }): Promise<Selection> {
      const nodes: V1Node[] = [];
      let _continue: string | undefined;
      do {
        const page = await kube.core.listNode({ limit: 500, _continue });
        nodes.push(...page.items);
        _continue = page.metadata?._continue || undefined;
      } while (_continue);
      return selectionOf(input.nodeSelector, nodes, input.partitionBy);
    },
  };
}
