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
    description: 'How drains treat the pods a rule matches on the nodes it matches: drain them in an order, skip them, or wait for them to complete. Cluster-scoped; every drain (node cycling and maintenance) applies the rules.',
    plural: DRAIN_RULE.plural,
    singular: DRAIN_RULE.singular,
    // sdr first; dr (Istio's DestinationRule has it too) stays for one release (CHANGELOG.md).
    shortNames: ['sdr', 'dr'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: DrainRuleSpec,
    printerColumns: [
      { name: 'Behavior', type: 'string', jsonPath: '.spec.drain.behavior', description: 'What a drain does with the matched pods: Drain, Skip or WaitCompleted.' },
      { name: 'Order', type: 'integer', jsonPath: '.spec.drain.order', description: 'The drain step of the matched pods: lower orders drain first.' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
    ],
  },
  {
    kind: CYCLE_NODE_REQUEST.kind,
    description: 'A request to replace the selected nodes of one or more cloud node groups, surge first: the group launches a replacement, then each old node is cordoned, drained, deleted and its instance terminated. Its spec cannot change once the cycle has started, except cycleSettings.concurrency.',
    plural: CYCLE_NODE_REQUEST.plural,
    singular: CYCLE_NODE_REQUEST.singular,
    shortNames: ['cnr'],
    scope: 'Namespaced',
    categories: CATEGORIES,
    spec: CycleNodeRequestSpec,
    status: CycleNodeRequestStatus,
    validations: immutableSpecRules(),
    printerColumns: [
      { name: 'Node Group', type: 'string', jsonPath: '.spec.nodeGroupName', description: 'The cloud node group whose nodes are cycled.' },
      { name: 'Method', type: 'string', jsonPath: '.spec.cycleSettings.method', description: 'Drain evicts the pods; Wait first waits for do-not-disrupt pods to finish.' },
      { name: 'Concurrency', type: 'integer', jsonPath: '.spec.cycleSettings.concurrency', description: 'Nodes in flight at once.' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Where the cycle is.' },
      { name: 'Cycled', type: 'string', jsonPath: '.status.nodesCycled', priority: 1, description: 'Nodes replaced so far.' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
    ],
  },
  {
    kind: CYCLE_NODE_STATUS.kind,
    description: 'The cycle of one node of a CycleNodeRequest, written by Slipway: read it, do not create it.',
    plural: CYCLE_NODE_STATUS.plural,
    singular: CYCLE_NODE_STATUS.singular,
    shortNames: ['cns'],
    scope: 'Namespaced',
    categories: CATEGORIES,
    spec: CycleNodeStatusSpec,
    status: CycleNodeStatusStatus,
    printerColumns: [
      { name: 'Node', type: 'string', jsonPath: '.spec.nodeName', description: 'The node being cycled.' },
      { name: 'Provider ID', type: 'string', jsonPath: '.status.providerID', description: 'The cloud instance of the node.' },
      { name: 'Method', type: 'string', jsonPath: '.spec.cycleSettings.method', description: 'Drain evicts the pods; Wait first waits for do-not-disrupt pods to finish.' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Where the node\'s cycle is.' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
    ],
  },
  {
    kind: NODE_MAINTENANCE.kind,
    description: 'Maintenance of the selected nodes in stages: Idle (a preview of what a drain would do), Cordon, Drain, Complete (uncordon). Set spec.stage to move it on; status says what each node is doing and what blocks it.',
    plural: NODE_MAINTENANCE.plural,
    singular: NODE_MAINTENANCE.singular,
    shortNames: ['snm'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: NodeMaintenanceSpec,
    status: NodeMaintenanceStatus,
    printerColumns: [
      { name: 'Stage', type: 'string', jsonPath: '.spec.stage', description: 'The stage asked for: Idle, Cordon, Drain or Complete.' },
      { name: 'Drained', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drained")].status', description: 'True once every selected node is drained.' },
      { name: 'Nodes', type: 'integer', jsonPath: '.status.selectedNodes', description: 'Nodes the maintenance selects now.' },
      // Pods whose eviction is refused now (a PDB, …), summed over the nodes: a stuck Drain shows here.
      { name: 'Blocked', type: 'integer', jsonPath: '.status.drainStatus.podsBlocked', description: 'Pods whose eviction is refused now (a PodDisruptionBudget, …), summed over the nodes.' },
      { name: 'Done', type: 'integer', jsonPath: '.status.rollout.done', description: 'With spec.rollout: nodes whose work is done and verified.' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.rollout.failed', description: 'With spec.rollout: nodes failed (timed out, drain failed).' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
      { name: 'Reason', type: 'string', jsonPath: '.spec.reason', priority: 1, description: 'Why the maintenance is done, as its author wrote it.' },
    ],
  },
  {
    kind: NODE_DISRUPTION_BUDGET.kind,
    description: 'A limit on how many of the selected nodes may be disrupted (cordoned, drained or deleted) at once, by every cycle and maintenance, with schedule windows and per-zone limits.',
    plural: NODE_DISRUPTION_BUDGET.plural,
    singular: NODE_DISRUPTION_BUDGET.singular,
    shortNames: ['snb'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: NodeDisruptionBudgetSpec,
    status: NodeDisruptionBudgetStatus,
    printerColumns: [
      { name: 'Max', type: 'string', jsonPath: '.spec.maxDisrupted', description: 'The base limit: a count or a percentage of the selected nodes.' },
      { name: 'Limit', type: 'integer', jsonPath: '.status.limit.nodes', description: 'Nodes that may be disrupted at once now (windows and zones applied).' },
      { name: 'Disrupted', type: 'integer', jsonPath: '.status.disruptedNodes', description: 'Selected nodes disrupted now.' },
      { name: 'Selected', type: 'integer', jsonPath: '.status.limit.selectedNodes', priority: 1, description: 'Nodes the budget selects.' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
      { name: 'Why', type: 'string', jsonPath: '.status.limit.reason', priority: 1, description: 'Which rule sets the limit now: the base or an open window.' },
    ],
  },
  {
    kind: NODE_GROUP.kind,
    description: 'A cloud node group Slipway watches: its drift observer creates a CycleNodeRequest from the template when nodes run a launch template the group no longer uses.',
    plural: NODE_GROUP.plural,
    singular: NODE_GROUP.singular,
    shortNames: ['sng'],
    scope: 'Cluster',
    categories: CATEGORIES,
    spec: NodeGroupSpec,
    status: NodeGroupStatus,
    printerColumns: [
      { name: 'Node Group', type: 'string', jsonPath: '.spec.template.nodeGroupName', description: 'The cloud node group this object watches.' },
      { name: 'Interval', type: 'string', jsonPath: '.spec.driftObserver.interval', description: 'How often the drift observer compares the nodes with the group\'s launch template.' },
      { name: 'Drifted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drifted")].status', description: 'True when some node runs a launch template the group no longer uses.' },
      { name: 'Last Request', type: 'string', jsonPath: '.status.lastRequest', description: 'The CycleNodeRequest the drift observer created last.' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
    ],
  },
  {
    kind: EVACUATION.kind,
    description: 'A request to move one pod off its node: evacuators registered on the pod (annotations) move it in priority order; when none makes progress, Slipway evicts it. Several requesters may share one Evacuation.',
    plural: EVACUATION.plural,
    singular: EVACUATION.singular,
    shortNames: ['evac'],
    scope: 'Namespaced',
    categories: CATEGORIES,
    spec: EvacuationSpec,
    status: EvacuationStatus,
    printerColumns: [
      { name: 'Pod', type: 'string', jsonPath: '.spec.podRef.name', description: 'The pod to move off its node.' },
      { name: 'Active', type: 'string', jsonPath: '.status.activeEvacuator', description: 'The evacuator handling the pod now.' },
      { name: 'Fallback', type: 'string', jsonPath: '.status.conditions[?(@.type=="EvictionFallback")].status', description: 'True once no evacuator made progress and eviction took over.' },
      { name: 'Failed Evictions', type: 'integer', jsonPath: '.status.failedEvictions', priority: 1, description: 'Eviction refusals since the fallback began.' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' },
    ],
  },
];

/** ValidatingAdmissionPolicies and their bindings, installed with the CRDs (crds/admission-policies.yaml). */
export const POLICIES: Array<Record<string, unknown>> = [...drainRulePolicies(), ...nodeMaintenancePolicies()];
