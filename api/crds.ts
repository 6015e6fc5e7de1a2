// Every CRD slipway serves, generated from its zod types (npm run crds). Add new kinds here.
// POLICIES are the admission policies installed with them (warnings the schema cannot give).
import type { CrdDefinition } from './crd.js';
import { CYCLE_NODE_REQUEST, CYCLE_NODE_STATUS, CycleNodeRequestSpec, immutableSpecRules, CycleNodeRequestStatus, CycleNodeStatusSpec, CycleNodeStatusStatus } from './cycle-node-request.js';
import { DRAIN_RULE, DrainRuleSpec, drainRulePolicies } from './drain-rule.js';
import { EVACUATION, EvacuationSpec, EvacuationStatus } from './evacuation.js';
import { NODE_DISRUPTION_BUDGET, NodeDisruptionBudgetSpec, NodeDisruptionBudgetStatus } from './node-disruption-budget.js';
import { NODE_GROUP, NodeGroupSpec, NodeGroupStatus } from './node-group-kind.js';
import { NODE_MAINTENANCE, NodeMaintenanceSpec, NodeMaintenanceStatus, nodeMaintenancePolicies } from './node-maintenance.js';

/** `kubectl get slipway` lists every kind. */
const CATEGORIES = ['slipway'];

export const CRDS: CrdDefinition[] = [
  {
    kind: DRAIN_RULE.kind,
    plural: DRAIN_RULE.plural,
    singular: DRAIN_RULE.singular,
    shortNames: ['dr'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: DrainRuleSpec,
    printerColumns: [
      { name: 'Behavior', type: 'string', jsonPath: '.spec.drain.behavior' },
      { name: 'Order', type: 'integer', jsonPath: '.spec.drain.order' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  },
  {
    kind: CYCLE_NODE_REQUEST.kind,
    plural: CYCLE_NODE_REQUEST.plural,
    singular: CYCLE_NODE_REQUEST.singular,
    shortNames: ['cnr'],
    scope: 'Namespaced',
    categories: CATEGORIES,
    spec: CycleNodeRequestSpec,
    status: CycleNodeRequestStatus,
    validations: immutableSpecRules(),
    printerColumns: [
      { name: 'Node Group', type: 'string', jsonPath: '.spec.nodeGroupName' },
      { name: 'Method', type: 'string', jsonPath: '.spec.cycleSettings.method' },
      { name: 'Concurrency', type: 'integer', jsonPath: '.spec.cycleSettings.concurrency' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Cycled', type: 'string', jsonPath: '.status.nodesCycled', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  },
  {
    kind: CYCLE_NODE_STATUS.kind,
    plural: CYCLE_NODE_STATUS.plural,
    singular: CYCLE_NODE_STATUS.singular,
    shortNames: ['cns'],
    scope: 'Namespaced',
    categories: CATEGORIES,
    spec: CycleNodeStatusSpec,
    status: CycleNodeStatusStatus,
    printerColumns: [
      { name: 'Node', type: 'string', jsonPath: '.spec.nodeName' },
      { name: 'Provider ID', type: 'string', jsonPath: '.status.providerID' },
      { name: 'Method', type: 'string', jsonPath: '.spec.cycleSettings.method' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  },
  {
    kind: NODE_MAINTENANCE.kind,
    plural: NODE_MAINTENANCE.plural,
    singular: NODE_MAINTENANCE.singular,
    shortNames: ['snm'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: NodeMaintenanceSpec,
    status: NodeMaintenanceStatus,
    printerColumns: [
      { name: 'Stage', type: 'string', jsonPath: '.spec.stage' },
      { name: 'Drained', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drained")].status' },
      { name: 'Nodes', type: 'integer', jsonPath: '.status.selectedNodes' },
      // Pods whose eviction is refused now (a PDB, …), summed over the nodes: a stuck Drain shows here.
      { name: 'Blocked', type: 'integer', jsonPath: '.status.drainStatus.podsBlocked' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      { name: 'Reason', type: 'string', jsonPath: '.spec.reason', priority: 1 },
    ],
  },
  {
    kind: NODE_DISRUPTION_BUDGET.kind,
    plural: NODE_DISRUPTION_BUDGET.plural,
    singular: NODE_DISRUPTION_BUDGET.singular,
    shortNames: ['snb'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: NodeDisruptionBudgetSpec,
    status: NodeDisruptionBudgetStatus,
    printerColumns: [
      { name: 'Max', type: 'string', jsonPath: '.spec.maxDisrupted' },
      { name: 'Limit', type: 'integer', jsonPath: '.status.limit.nodes' },
      { name: 'Disrupted', type: 'integer', jsonPath: '.status.disruptedNodes' },
      { name: 'Selected', type: 'integer', jsonPath: '.status.limit.selectedNodes', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      { name: 'Why', type: 'string', jsonPath: '.status.limit.reason', priority: 1 },
    ],
  },
  {
    kind: NODE_GROUP.kind,
    plural: NODE_GROUP.plural,
    singular: NODE_GROUP.singular,
    shortNames: ['sng'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: NodeGroupSpec,
    status: NodeGroupStatus,
    printerColumns: [
      { name: 'Node Group', type: 'string', jsonPath: '.spec.template.nodeGroupName' },
      { name: 'Interval', type: 'string', jsonPath: '.spec.driftObserver.interval' },
      { name: 'Drifted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drifted")].status' },
      { name: 'Last Request', type: 'string', jsonPath: '.status.lastRequest' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  },
  {
    kind: EVACUATION.kind,
    plural: EVACUATION.plural,
    singular: EVACUATION.singular,
    shortNames: ['evac'],
    scope: 'Namespaced',
    categories: CATEGORIES,
    spec: EvacuationSpec,
    status: EvacuationStatus,
    printerColumns: [
      { name: 'Pod', type: 'string', jsonPath: '.spec.podRef.name' },
      { name: 'Active', type: 'string', jsonPath: '.status.activeEvacuator' },
      { name: 'Fallback', type: 'string', jsonPath: '.status.conditions[?(@.type=="EvictionFallback")].status' },
      { name: 'Failed Evictions', type: 'integer', jsonPath: '.status.failedEvictions', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  },
];

/** ValidatingAdmissionPolicies and their bindings, installed with the CRDs (crds/admission-policies.yaml). */
export const POLICIES: Array<Record<string, unknown>> = [...drainRulePolicies(), ...nodeMaintenancePolicies()];
