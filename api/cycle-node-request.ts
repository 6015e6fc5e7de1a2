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
const NodeName = patterned(DNS_SUBDOMAIN_PATTERN, 253, 'a node name (a DNS subdomain: lowercase letters, digits, "-" and ".")');
const NamespaceName = patterned(DNS_LABEL_PATTERN, 63, 'a namespace name (a DNS label: lowercase letters, digits and "-")');
/** An Auto Scaling group name may have up to 255 characters (kwok's label value, 63). */
const NodeGroupName = z.string().min(1).max(255);

export const CycleSettings = z.object({
  /** Drain: evict the pods. Wait: first wait for pods annotated slipway.dev/do-not-disrupt=true to finish, then drain the rest. */
  method: CycleMethod.default('Drain'),
  /** Nodes in flight at once. Default: all selected nodes. */
  concurrency: z.int32().min(1).max(MAX_CONCURRENCY).optional(),
  /** Per node: how long its cycle may take before it fails. */
  cyclingTimeout: duration(DURATION_BOUNDS.cyclingTimeout).default('3h'),
  /** Pod label keys removed before draining (takes pods out of Services first). */
  labelsToRemove: z.array(LabelKey).max(32).optional(),
  /** Wait method: pods with any of these label values are not waited for. */
  ignorePodsLabels: labelMap(z.array(LabelValue).max(64), 32).optional(),
  /** Wait method: pods of these namespaces are not waited for. */
  ignoreNamespaces: z.array(NamespaceName).max(64).optional(),
});
export type CycleSettings = z.infer<typeof CycleSettings>;

export const NodeGroupProviderName = kubeEnum(['kwok', 'aws']);
export type NodeGroupProviderName = z.infer<typeof NodeGroupProviderName>;

/** Health checks and pre-termination checks, each. */
const MAX_CHECKS = 16;

const CycleNodeRequestSpecFields = z
  .object({
    /** The cloud node group (an Auto Scaling group; for kwok, the slipway.dev/node-group label value). */
    nodeGroupName: z.string().max(255).default(''),
    /** More node groups sharing one concurrency budget; merged with nodeGroupName. */
    nodeGroupsList: z.array(NodeGroupName).max(32).optional(),
    /** Which node-group provider; default: the worker's (SLIPWAY_PROVIDER, kwok locally). */
    provider: NodeGroupProviderName.optional(),
    /** Selects the Nodes to cycle (required and non-empty: an empty selector would match every node). */
    selector: LabelSelector,
    /** Cycle only these nodes of the selection. */
    nodeNames: z.array(NodeName).max(1000).optional(),
    validationOptions: z.object({ skipMissingNamedNodes: z.boolean().default(false) }).optional(),
    cycleSettings: CycleSettings.default({ method: 'Drain', cyclingTimeout: '3h' }),
    healthChecks: z.array(HealthCheck).max(MAX_CHECKS).optional().meta({ 'x-kubernetes-validations': regexCompilesRules('healthChecks', MAX_CHECKS) }),
    preTerminationChecks: z.array(PreTerminationCheck).max(MAX_CHECKS).optional().meta({ 'x-kubernetes-validations': regexCompilesRules('preTerminationChecks', MAX_CHECKS, '.healthCheck') }),
    skipInitialHealthChecks: z.boolean().default(false),
    skipPreTerminationChecks: z.boolean().default(false),
    /** The drain engine's options: eviction timeout policy, volume timeout, drain plan, limits. DrainRules apply too. */
    drain: DrainOptions.optional(),
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
  });
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
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
  observedGeneration: z.int32().optional(),
});
export type Condition = z.infer<typeof Condition>;

/** A node of the request, as `status.nodes[]` lists it: a summary of its CycleNodeStatus. */
export const CycleNodeSummary = z.object({
  name: z.string(),
  providerID: z.string().optional(),
  nodeGroup: z.string().optional(),
  phase: CycleNodePhase,
  message: z.string().optional(),
});
export type CycleNodeSummary = z.infer<typeof CycleNodeSummary>;

export const CycleNodeRequestStatus = z.object({
  phase: CycleRequestPhase.optional(),
  message: z.string().optional(),
  nodes: z.array(CycleNodeSummary).optional(),
  nodesCycled: z.int32().optional(),
  nodesTotal: z.int32().optional(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  workflowId: z.string().optional(),
  runId: z.string().optional(),
  observedGeneration: z.int32().optional(),
  conditions: z.array(Condition).optional(),
});
export type CycleNodeRequestStatus = z.infer<typeof CycleNodeRequestStatus>;

export const CycleNodeStatusSpec = z.object({
  nodeName: z.string().min(1),
  /** The CycleNodeRequest this node belongs to. */
  requestName: z.string().min(1),
  cycleSettings: CycleSettings,
});
export const CycleNodeStatusStatus = z.object({
  phase: CycleNodePhase.optional(),
  message: z.string().optional(),
  providerID: z.string().optional(),
  nodeGroup: z.string().optional(),
  startedAt: z.string().optional(),
  timeoutAt: z.string().optional(),
  evicted: z.int32().optional(),
  /** The drain's current blocker, in Cluster API's message shape. */
  drainMessage: z.string().optional(),
  /** Pods that kept coming back after eviction, left on the node when it was deleted, and why (the drain's status.returning). */
  returning: z.array(z.object({ pod: z.string(), reason: z.string() })).optional(),
});
export type CycleNodeStatusStatus = z.infer<typeof CycleNodeStatusStatus>;

export const CYCLE_NODE_REQUEST = { group: 'slipway.dev', version: 'v1alpha1', kind: 'CycleNodeRequest', plural: 'cyclenoderequests', singular: 'cyclenoderequest' } as const;
export const CYCLE_NODE_STATUS = { group: 'slipway.dev', version: 'v1alpha1', kind: 'CycleNodeStatus', plural: 'cyclenodestatuses', singular: 'cyclenodestatus' } as const;
