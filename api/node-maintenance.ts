// NodeMaintenance (slipway.dev/v1alpha1, cluster-scoped): KEP-4212's declarative node maintenance.
// Nodes chosen by a v1 NodeSelector go Idle → Cordon → Drain → Complete; in Drain, pods leave in
// drain-plan order, coordinated with every other maintenance that covers the same node.
// Spec: ../shared/specs/node-maintenance.md (NM-1, NM-4). The CRD schema is generated from here.
import { z } from 'zod';
import { kubeEnum } from './admission.js';
import { DrainOptions } from './drain-options.js';
import { DEFAULT_DRAIN_PLAN, planOrderError } from './drain-plan.js';
import { LabelSelector } from './label-selector.js';

export const NODE_MAINTENANCE = { kind: 'NodeMaintenance', plural: 'nodemaintenances', singular: 'nodemaintenance' } as const;

export const MaintenanceStage = kubeEnum(['Idle', 'Cordon', 'Drain', 'Complete']);

export const NodeSelectorOperator = kubeEnum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
export const NodeSelectorRequirement = z.object({
  key: z.string().min(1).max(317),
  operator: NodeSelectorOperator,
  values: z.array(z.string().max(63)).max(256).optional(),
});
export type NodeSelectorRequirement = z.infer<typeof NodeSelectorRequirement>;
export const NodeSelectorTerm = z.object({
  matchExpressions: z.array(NodeSelectorRequirement).max(64).optional(),
  matchFields: z.array(NodeSelectorRequirement).max(64).optional(),
});
export type NodeSelectorTerm = z.infer<typeof NodeSelectorTerm>;
/** core/v1 NodeSelector: terms ORed, requirements inside a term ANDed. */
export const NodeSelector = z.object({ nodeSelectorTerms: z.array(NodeSelectorTerm).max(64) });
export type NodeSelector = z.infer<typeof NodeSelector>;

/** A drain-plan entry as NodeMaintenance takes it: podPriority required (NM-1.4, spec §8.9). */
export const MaintenancePlanEntry = z.object({
  podType: kubeEnum(['Default', 'DaemonSet', 'Static']).default('Default'),
  podPriority: z.int32(),
  podSelector: LabelSelector.optional(),
});
export type MaintenancePlanEntry = z.infer<typeof MaintenancePlanEntry>;

/** The drain engine's options minus drainPlan (spec.drainPlan is the plan), plus the evacuation deadline. */
export const MaintenanceDrainOptions = DrainOptions.omit({ drainPlan: true });

export const NodeMaintenanceSpec = z
  .object({
    nodeSelector: NodeSelector,
    stage: MaintenanceStage.default('Idle'),
    drainPlan: z
      .array(MaintenancePlanEntry)
      .max(64)
      .default(() => DEFAULT_DRAIN_PLAN.map((e) => ({ ...e }))),
    reason: z.string().max(1024).optional(),
    drain: MaintenanceDrainOptions.optional(),
  })
  .superRefine((spec, ctx) => {
    const err = planOrderError(spec.drainPlan);
    if (err) ctx.addIssue({ code: 'custom', path: ['drainPlan'], message: err.replace(/^spec\.drainPlan(\[\d+\])?: /, '') });
  });
export type NodeMaintenanceSpec = z.infer<typeof NodeMaintenanceSpec>;
export type NodeMaintenanceSpecInput = z.input<typeof NodeMaintenanceSpec>;

// ---- Names Slipway puts on objects for NodeMaintenance (one home; spec §6, NM-2.3, NM-4.8).
/** On the NodeMaintenance once it leaves Idle: Complete runs before the object goes. */
export const MAINTENANCE_FINALIZER = 'slipway.dev/maintenance';
/** On the NodeMaintenance: the operator acknowledges a selector that takes every node. */
export const ALLOW_ALL_NODES_ANNOTATION = 'maintenance.slipway.dev/allow-all-nodes';
/** Node label: Cordoned | Draining | Drained while any maintenance holds the node. */
export const MAINTENANCE_STATE_LABEL = 'maintenance.slipway.dev/state';
/** Node annotation: the holders' names, sorted, comma-separated. */
export const HELD_BY_ANNOTATION = 'maintenance.slipway.dev/held-by';
/** Node annotation: JSON of the node's targets, message and counts (KEP Node.status.maintenanceStatus). */
export const MAINTENANCE_STATUS_ANNOTATION = 'maintenance.slipway.dev/status';
/** Node annotation: the node was unschedulable before its first holder cordoned it; Complete leaves it cordoned. */
export const WAS_UNSCHEDULABLE_ANNOTATION = 'maintenance.slipway.dev/was-unschedulable';
