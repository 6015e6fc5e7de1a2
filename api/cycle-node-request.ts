// CycleNodeRequest and CycleNodeStatus (slipway.dev/v1alpha1, namespaced): Cyclops's node cycling.
// A request replaces the selected nodes of one or more cloud node groups, surge first: detach (the
// group launches a replacement), wait for the replacement to be Ready and healthy, then cordon,
// drain, delete the Node and terminate the instance. One CycleNodeStatus per node mirrors its cycle.
import { nodeGroupsOf } from './node-groups.js';
import { z } from 'zod';
import { kubeEnum, patterned } from './admission.js';
import { DrainOptions } from './drain-options.js';
import { duration, DURATION_BOUNDS } from './duration.js';
import { HealthCheck, PreTerminationCheck, regexCompilesRules } from './health-check.js';
import { DNS_LABEL_PATTERN, DNS_SUBDOMAIN_PATTERN, isEmptySelector, LabelKey, labelMap, LabelSelector, LabelValue } from './label-selector.js';

export { HealthCheck, PreTerminationCheck };

export const CycleMethod = kubeEnum(['Drain', 'Wait']);

/** Most nodes in flight at once that a request may ask for. */
export const MAX_CONCURRENCY = 1000;
export { DEFAULT_MAX_IN_FLIGHT, allAtOnce } from './names.js';
import { DEFAULT_MAX_IN_FLIGHT } from './names.js';
const NodeName = patterned(DNS_SUBDOMAIN_PATTERN, 253, 'a node name (a DNS subdomain: lowercase letters, digits, "-" and ".")');
const NamespaceName = patterned(DNS_LABEL_PATTERN, 63, 'a namespace name (a DNS label: lowercase letters, digits and "-")');
/** An Auto Scaling group name may have up to 255 characters (kwok's label value, 63). */
const NodeGroupName = z.string().min(1).max(255);

export const CycleSettings = z.object({
  method: CycleMethod.default('Drain').describe('Drain: evict the pods. Wait: first wait for pods annotated slipway.dev/do-not-disrupt=true to finish, then drain the rest.'),
  concurrency: z.int32().min(1).max(MAX_CONCURRENCY).optional().describe(`Nodes in flight at once. Default: all selected nodes, at most ${DEFAULT_MAX_IN_FLIGHT} at a time.`),
  cyclingTimeout: duration(DURATION_BOUNDS.cyclingTimeout).default('3h').describe('Per node: how long its cycle may take before it fails.'),
  labelsToRemove: z.array(LabelKey).max(32).optional().describe('Pod label keys removed before draining (takes pods out of Services first).'),
  ignorePodsLabels: labelMap(z.array(LabelValue).max(64), 32).optional().describe('Wait method: pods with any of these label values are not waited for.'),
  ignoreNamespaces: z.array(NamespaceName).max(64).optional().describe('Wait method: pods of these namespaces are not waited for.'),
});
export type CycleSettings = z.infer<typeof CycleSettings>;

export const NodeGroupProviderName = kubeEnum(['kwok', 'aws']);
export type NodeGroupProviderName = z.infer<typeof NodeGroupProviderName>;

/** Health checks and pre-termination checks, each. */
const MAX_CHECKS = 16;

const CycleNodeRequestSpecFields = z
  .object({
    nodeGroupName: z.string().max(255).default('').describe('The cloud node group (an Auto Scaling group; for kwok, the slipway.dev/node-group label value).'),
    nodeGroupsList: z.array(NodeGroupName).max(32).optional().describe('More node groups sharing one concurrency budget; merged with nodeGroupName.'),
    provider: NodeGroupProviderName.optional().describe('Which node-group provider; default: the worker\'s (SLIPWAY_PROVIDER, kwok locally).'),
    selector: LabelSelector.describe('Selects the Nodes to cycle (required and non-empty: an empty selector would match every node).'),
    nodeNames: z.array(NodeName).max(1000).optional().describe('Cycle only these nodes of the selection.'),
    validationOptions: z
      .object({ skipMissingNamedNodes: z.boolean().default(false).describe('Carry on when a node of nodeNames does not exist (default: the request fails).') })
      .optional()
      .describe('How strictly the request is checked before it starts.'),
    cycleSettings: CycleSettings.default({ method: 'Drain', cyclingTimeout: '3h' }).describe('How each node is cycled: method, concurrency, timeout, pods to leave alone.'),
    healthChecks: z
      .array(HealthCheck)
      .max(MAX_CHECKS)
      .optional()
      .meta({ 'x-kubernetes-validations': regexCompilesRules('healthChecks', MAX_CHECKS) })
      .describe('HTTP checks every replacement node must pass before an old node is drained.'),
    preTerminationChecks: z
      .array(PreTerminationCheck)
      .max(MAX_CHECKS)
      .optional()
      .meta({ 'x-kubernetes-validations': regexCompilesRules('preTerminationChecks', MAX_CHECKS, '.healthCheck') })
      .describe('Per old node, once it is cordoned and before it is drained: POST to triggerEndpoint, then poll healthCheck until it passes.'),
    skipInitialHealthChecks: z.boolean().default(false).describe('Do not run the health checks against the current nodes before the cycle starts.'),
    skipPreTerminationChecks: z.boolean().default(false).describe('Do not run the pre-termination checks.'),
    drain: DrainOptions.optional().describe('The drain engine\'s options: eviction timeout policy, volume timeout, drain plan, limits. DrainRules apply too.'),
  });

/**
 * CEL transition rules on the object: once its cycle has started (status.workflowId is set), only
 * spec.cycleSettings.concurrency may change (the bridge sends that to the running cycle); any other
 * edit is refused at admission. Before that, an invalid request can still be fixed. One rule per
 * field, so the message names it and each stays within the CEL cost budget.
 */
export function immutableSpecRules(): Array<{ rule: string; message: string; fieldPath: string }> {
  const same = (path: string) => `(has(self.spec.${path}) == has(oldSelf.spec.${path})) && (!has(self.spec.${path}) || self.spec.${path} == oldSelf.spec.${path})`;
  const started = '!has(oldSelf.status) || !has(oldSelf.status.workflowId)';
  const top = Object.keys(CycleNodeRequestSpecFields.shape).filter((k) => k !== 'cycleSettings');
  const settings = Object.keys(CycleSettings.shape).filter((k) => k !== 'concurrency').map((k) => `cycleSettings.${k}`);
  return [...top, ...settings].map((path) => ({
    rule: path.includes('.') ? `${started} || !has(self.spec.cycleSettings) || !has(oldSelf.spec.cycleSettings) || (${same(path)})` : `${started} || (${same(path)})`,
    message: `spec.${path} cannot change once the cycle has started: only spec.cycleSettings.concurrency can`,
    fieldPath: `.spec.${path}`,
  }));
}

export const CycleNodeRequestSpec = CycleNodeRequestSpecFields
  .superRefine((s, ctx) => {
    const groups = nodeGroupsOf(s);
    if (groups.length === 0) ctx.addIssue({ code: 'custom', path: ['nodeGroupName'], message: 'name at least one node group (nodeGroupName or nodeGroupsList)' });
    if (isEmptySelector(s.selector)) ctx.addIssue({ code: 'custom', path: ['selector'], message: 'selector must not be empty: it would match every node' });
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: "self.nodeGroupName != '' || (has(self.nodeGroupsList) && size(self.nodeGroupsList) > 0)", message: 'name at least one node group (nodeGroupName or nodeGroupsList)', fieldPath: '.nodeGroupName' },
      { rule: '(has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions) && size(self.selector.matchExpressions) > 0)', message: 'selector must not be empty: it would match every node', fieldPath: '.selector' },
    ],
  })
  .describe('Which nodes to cycle and how.');
export type CycleNodeRequestSpec = z.infer<typeof CycleNodeRequestSpec>;
export type CycleNodeRequestSpecInput = z.input<typeof CycleNodeRequestSpec>;

/** nodeGroupName and nodeGroupsList, merged and deduplicated. */
export { nodeGroupsOf };

// ---- status ------------------------------------------------------------------------------------

export const CycleRequestPhase = z.enum(['Pending', 'Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination', 'Successful', 'Healing', 'Failed']);
export type CycleRequestPhase = z.infer<typeof CycleRequestPhase>;
export const CycleNodePhase = z.enum(['Pending', 'WaitingPods', 'RemovingLabelsFromPods', 'DrainingPods', 'DeletingNode', 'TerminatingNode', 'Successful', 'Failed']);
export type CycleNodePhase = z.infer<typeof CycleNodePhase>;

/** metav1.Condition. */
export const Condition = z.object({
  type: z.string().describe('The condition\'s name, unique in the list (kubectl wait --for=condition=<type>).'),
  status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
  reason: z.string().describe('A CamelCase word for why the status is what it is.'),
  message: z.string().describe('What a person needs to know, in a sentence.'),
  lastTransitionTime: z.string().describe('When status last changed (RFC 3339).'),
  observedGeneration: z.int32().optional().describe('The metadata.generation the condition was set from.'),
});

/**
 * A status's conditions: a map list keyed by type, so `kubectl wait --for=condition=…` and
 * server-side apply address one condition; `types` names the ones this kind sets.
 */
export const conditions = (types: string, max = 16) =>
  z
    .array(Condition)
    .max(max)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
    .describe(`The object's conditions (metav1.Condition), one per type: ${types}.`);

/** status.observedGeneration: the spec generation the status describes (GitOps health checks compare it with metadata.generation). */
export const ObservedGeneration = z.int32().optional().describe('The metadata.generation this status describes; behind metadata.generation, the spec change is not acted on yet.');
export type Condition = z.infer<typeof Condition>;

/** A node of the request, as `status.nodes[]` lists it: a summary of its CycleNodeStatus. */
export const CycleNodeSummary = z.object({
  name: z.string().describe('The Node\'s name.'),
  providerID: z.string().optional().describe('The Node\'s cloud instance (spec.providerID).'),
  nodeGroup: z.string().optional().describe('The cloud node group the node belongs to.'),
  phase: CycleNodePhase.describe('Where the node\'s cycle is (its CycleNodeStatus\'s phase).'),
  message: z.string().optional().describe('What the node\'s cycle is doing or why it failed.'),
});
export type CycleNodeSummary = z.infer<typeof CycleNodeSummary>;

const count = (phase: string) => z.int32().min(0).describe(`Nodes in phase ${phase}.`);

/** Nodes of a request per phase of their cycle (every phase present, 0 included: a merge patch replaces each). */
export const NodesByPhase = z
  .object({
    Pending: count('Pending (not taken yet, or waiting for a budget slot or a NodeMaintenance)'),
    WaitingPods: count('WaitingPods'),
    RemovingLabelsFromPods: count('RemovingLabelsFromPods'),
    DrainingPods: count('DrainingPods'),
    DeletingNode: count('DeletingNode'),
    TerminatingNode: count('TerminatingNode'),
    Successful: count('Successful (cycled)'),
    Failed: count('Failed'),
  } satisfies Record<CycleNodePhase, unknown>)
  .describe('How many of the request\'s nodes are in each phase of their cycle.');
export type NodesByPhase = z.infer<typeof NodesByPhase>;

export { MAX_LISTED_NODES, LISTED_FINISHED, LISTED_FAILED, LISTED_UP_TO, countByPhase } from './cycle-bounds.js';
import { MAX_LISTED_NODES } from './cycle-bounds.js';

export const CycleNodeRequestStatus = z
  .object({
    phase: CycleRequestPhase.optional().describe('Where the cycle is: Pending, Initialised, ScalingUp, CordoningNode, WaitingTermination, then Successful or Failed (Healing: putting nodes back after a failure).'),
    message: z.string().optional().describe('What the cycle is doing, or why it failed.'),
    nodes: z
      .array(CycleNodeSummary)
      .max(MAX_LISTED_NODES)
      .optional()
      .describe('The nodes in flight, the failed ones and the last ones finished (every node while the request has few), each a summary of its CycleNodeStatus. Every node has its own CycleNodeStatus object (label slipway.dev/cycle-node-request=<request>).'),
    nodesByPhase: NodesByPhase.optional(),
    nodesNotListed: z.int32().min(0).optional().describe('Nodes of the request not in nodes[] (see their CycleNodeStatus objects).'),
    nodesCycled: z.int32().optional().describe('Nodes replaced so far.'),
    nodesTotal: z.int32().optional().describe('Nodes the cycle replaces.'),
    startedAt: z.string().optional().describe('When the cycle started (RFC 3339).'),
    completedAt: z.string().optional().describe('When the cycle ended, successfully or not (RFC 3339).'),
    workflowId: z.string().optional().describe('The Temporal workflow that runs the cycle; once set, the spec is fixed except cycleSettings.concurrency.'),
    runId: z.string().optional().describe('The run of that workflow.'),
    observedGeneration: ObservedGeneration,
    conditions: conditions('Ready (the cycle succeeded), Progressing (it is running)'),
  })
  .describe('What the cycle has done, written by Slipway.');
export type CycleNodeRequestStatus = z.infer<typeof CycleNodeRequestStatus>;

export const CycleNodeStatusSpec = z
  .object({
    nodeName: z.string().min(1).describe('The Node being cycled.'),
    requestName: z.string().min(1).describe('The CycleNodeRequest this node belongs to.'),
    cycleSettings: CycleSettings.describe('The request\'s cycleSettings, as the node\'s cycle uses them.'),
  })
  .describe('The node and the request it is cycled for, written by Slipway.');
export const CycleNodeStatusStatus = z.object({
  observedGeneration: ObservedGeneration,
  phase: CycleNodePhase.optional().describe('Where the node\'s cycle is: Pending, WaitingPods, RemovingLabelsFromPods, DrainingPods, DeletingNode, TerminatingNode, then Successful or Failed.'),
  message: z.string().optional().describe('What the node\'s cycle is doing, or why it failed.'),
  providerID: z.string().optional().describe('The Node\'s cloud instance (spec.providerID).'),
  nodeGroup: z.string().optional().describe('The cloud node group the node belongs to.'),
  startedAt: z.string().optional().describe('When the node\'s cycle started (RFC 3339).'),
  timeoutAt: z.string().optional().describe('When the node\'s cycle fails unless done (startedAt plus cyclingTimeout, RFC 3339).'),
  evicted: z.int32().optional().describe('Pods evicted from the node so far.'),
  drainMessage: z.string().optional().describe('The drain\'s current blocker, in Cluster API\'s message shape.'),
  returning: z.array(z.object({ pod: z.string().describe('namespace/name of the pod.'), reason: z.string().describe('Why it came back (its owner recreates it on this node, …).') })).optional().describe('Pods that kept coming back after eviction, left on the node when it was deleted, and why (the drain\'s status.returning).'),
}).describe('The node\'s cycle, written by Slipway.');
export type CycleNodeStatusStatus = z.infer<typeof CycleNodeStatusStatus>;

export { CYCLE_NODE_REQUEST, CYCLE_NODE_STATUS } from './names.js';

// ---- labels, annotations and the finalizer of a cycle -------------------------------------------

/** Held on every CycleNodeRequest the bridge acts on, until its workflow is closed. */
export const CYCLE_FINALIZER = 'slipway.dev/cycle';
/** On each CycleNodeStatus: the request it belongs to (the bridge's requestLabelValue). */
export const CYCLE_REQUEST_LABEL = 'slipway.dev/cycle-node-request';
/**
 * Node annotation: the request (ns/name/uid) that claimed the node. Also the claim that keeps
 * NodeMaintenances off it (NM-7.5): written with a resourceVersion precondition, and only while no
 * maintenance holds the node (maintenance.slipway.dev/held-by); the first claim wins.
 */
export const CYCLED_BY = 'slipway.dev/cycled-by';
/** Node annotation, ours: we set cluster-autoscaler's scale-down-disabled (value: the request), so we remove it; a pre-existing one is left alone. */
export const CA_ANNOTATION_OWNER = 'slipway.dev/scale-down-disabled-by';
