// Which nodes a maintenance selects, and whether that is every node (NM-4.8). Read-only.
import { matchesNodeSelector } from '../../api/node-selector.js';
import type { NodeSelector } from '../../api/node-maintenance.js';
import type { V1Node } from '@kubernetes/client-node';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import type { Kube } from '../../kube/client.js';
import { listAllPages } from '../../kube/listwatch.js';
import { claimantName } from '../cycle/markers.js';
import { heldBy } from './node-conditions.js';

const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';

export interface Selection {
  /** Selected node names, sorted. */
  nodes: string[];
  totalNodes: number;
  controlPlaneNodes: number;
  controlPlaneSelected: number;
  /** Asked with partitionBy (spec.rollout): each selected node's value of that label ("" without it). */
  partitions?: Record<string, string>;
  /**
   * Asked with `holder` (a rolling maintenance, RM-1.5): each selected node that someone else holds,
   * as its Waiting line names them ("NodeMaintenance a, b" from held-by, "CycleNodeRequest ns/name" from the claim).
   */
  elsewhere?: Record<string, string>;
  /** The most nodes one maintenance may hold (#28, the worker's SLIPWAY_MAINTENANCE_MAX_NODES); absent in old histories: no limit. */
  maxNodes?: number;
}

/**
 * One NodeMaintenance holds at most this many nodes (#28): its workflow carries a report per held
 * node (about 700 bytes with a blocked pod; a rollout adds about 500 a finished node) and its status lists them, so 200 keep both under
 * 256 KiB (docs/design.md, "budgets and maintenances at fleet size").
 */
export const DEFAULT_MAINTENANCE_MAX_NODES = 200;

/** The limit in effect on this worker: SLIPWAY_MAINTENANCE_MAX_NODES (a positive integer), else the default. */
export function maintenanceMaxNodes(): number {
  const v = Number(process.env.SLIPWAY_MAINTENANCE_MAX_NODES);
  return Number.isInteger(v) && v > 0 ? v : DEFAULT_MAINTENANCE_MAX_NODES;
}

export interface SelectionAsk {
  partitionBy?: string;
  /** The asking maintenance's name: its own hold is not "elsewhere". */
  holder?: string;
}

/** Who other than `holder` holds the node, in one phrase (undefined: nobody). */
export function heldElsewhere(n: V1Node, holder: string): string | undefined {
  const claim = n.metadata?.annotations?.[CYCLED_BY];
  if (claim) return `CycleNodeRequest ${claimantName(claim)}`;
  const others = heldBy(n).filter((h) => h !== holder);
  return others.length ? `NodeMaintenance ${others.join(', ')}` : undefined;
}

/** The selection over these nodes (pure: the read and the selection watch share it). */
export function selectionOf(nodeSelector: NodeSelector, all: V1Node[], ask: SelectionAsk = {}): Selection {
  const { partitionBy, holder } = ask;
  const nodes = all.map((n) => ({ name: n.metadata!.name!, labels: n.metadata?.labels ?? {}, node: n }));
  const selected = nodes.filter((n) => matchesNodeSelector(nodeSelector, n));
  const cp = nodes.filter((n) => n.labels[CONTROL_PLANE_LABEL] !== undefined);
  return {
    nodes: selected.map((n) => n.name).sort(),
    totalNodes: nodes.length,
    controlPlaneNodes: cp.length,
    controlPlaneSelected: cp.filter((n) => selected.includes(n)).length,
    ...(partitionBy !== undefined ? { partitions: Object.fromEntries(selected.map((n) => [n.name, n.labels[partitionBy] ?? ''])) } : {}),
    ...(holder !== undefined ? { elsewhere: Object.fromEntries(selected.flatMap((n) => { const who = heldElsewhere(n.node, holder); return who ? [[n.name, who]] : []; })) } : {}),
  };
}

export function createSelectActivities(kube: Kube) {
  return {
    async selectMaintenanceNodes(input: { nodeSelector: NodeSelector } & SelectionAsk): Promise<Selection> {
      const { items: nodes } = await listAllPages((page) => kube.core.listNode(page));
      return { ...selectionOf(input.nodeSelector, nodes, input), maxNodes: maintenanceMaxNodes() };
    },
  };
}
