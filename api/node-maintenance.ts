// NodeMaintenance (slipway.dev/v1alpha1, cluster-scoped): KEP-4212's declarative node maintenance.
// Nodes chosen by a v1 NodeSelector go Idle → Cordon → Drain → Complete; in Drain, pods leave in
// drain-plan order, coordinated with every other maintenance that covers the same node.
// Spec: ../shared/specs/node-maintenance.md (NM-1, NM-2.1, NM-4). The CRD schema is generated from
// here; every rule is written twice from the same text, as CEL (admission) and as zod (the bridge,
// the CLI), and test/support/bad-node-maintenances.ts is the corpus both are tested against.
import { MAX_MAINTENANCE_REASON, NODE_MAINTENANCE } from './names.js';
import { z } from 'zod';
import { celString, entryRule, kubeEnum, repeatsEarlier } from './admission.js';
import { conditions, ObservedGeneration } from './cycle-node-request.js';
import { DrainOptions } from './drain-options.js';
import { DEFAULT_DRAIN_PLAN, planOrderError, type PlanEntry } from './drain-plan.js';
import { duration, DURATION_BOUNDS } from './duration.js';
import { DNS_SUBDOMAIN_PATTERN, LabelKey, LabelSelector, LabelValue } from './label-selector.js';
import { NodeMaintenanceRollout, ROLLOUT_NODE_PHASES, ROLLOUT_PHASES } from './rollout.js';

export { NODE_MAINTENANCE } from './names.js';

// ---- names other operators and Slipway's own parts read (spec §6, NM-2.3, NM-2.9, NM-4.8) --------

/** On the NodeMaintenance from the first stage past Idle until Complete has run (NM-2.3, NM-2.12). */
export const MAINTENANCE_FINALIZER = 'slipway.dev/maintenance';
/** Node label: the node's maintenance state, Cordoned | Draining | Drained (NM-6.1). */
export const MAINTENANCE_STATE_LABEL = 'maintenance.slipway.dev/state';
/** Node annotation: the holders' names, sorted, comma-separated (NM-6.2). */
export const HELD_BY_ANNOTATION = 'maintenance.slipway.dev/held-by';
/** Node annotation: JSON {drainTargets, drainMessage, counts, limitedBy, reason} (NM-6.3). */
export const MAINTENANCE_STATUS_ANNOTATION = 'maintenance.slipway.dev/status';
/** Node annotation "true": the node was unschedulable before its first holder cordoned it (NM-2.9c). */
export const WAS_UNSCHEDULABLE_ANNOTATION = 'maintenance.slipway.dev/was-unschedulable';
/** Node conditions, KEP-5683's names (NM-6.4): best-effort, the label and annotations above are the contract. */
export const NODE_CONDITION = { maintenanceInProgress: 'MaintenanceInProgress', drainInProgress: 'DrainInProgress', drained: 'Drained' } as const;

// ---- spec ----------------------------------------------------------------------------------------

export const MaintenanceStage = kubeEnum(['Idle', 'Cordon', 'Drain', 'Complete']);
export type MaintenanceStage = z.infer<typeof MaintenanceStage>;
const STAGE_RANK = "{'Idle': 0, 'Cordon': 1, 'Drain': 2, 'Complete': 3}";

/** NM-2.1: the message of a stage edit to a lower rank (the CEL rule and stageTransitionError say it alike). */
export const stageBackMessage = (from: string, to: string) => `spec.stage cannot go back from ${from} to ${to}`;

/** NM-4.1: the words for a selector that names no requirement. */
export const EMPTY_SELECTOR_MESSAGE = 'nodeSelector must name at least one requirement; an empty selector is refused';

export const NodeSelectorOperator = kubeEnum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
export type NodeSelectorOperator = z.infer<typeof NodeSelectorOperator>;
/** Gt/Lt compare the label as an integer: one value of digits (label values cannot start with "-"). */
const INTEGER_PATTERN = '^[0-9]{1,18}$';
const INTEGER_RE = new RegExp(INTEGER_PATTERN);
const SET_OPS = "['In', 'NotIn']";
const NO_VALUE_OPS = "['Exists', 'DoesNotExist']";

/** What operator `op` needs of its values; undefined when `values` suit it (NM-4.2). */
function valuesProblem(op: NodeSelectorOperator, values: readonly string[] | undefined): string | undefined {
  const n = values?.length ?? 0;
  if (op === 'In' || op === 'NotIn') return n === 0 ? 'needs values' : undefined;
  if (op === 'Exists' || op === 'DoesNotExist') return n > 0 ? 'takes no values' : undefined;
  return n === 1 && INTEGER_RE.test(values![0]!) ? undefined : 'takes exactly one integer value';
}

/** A Node label requirement: the label-selector operators plus Gt/Lt; keys and values checked as labels. */
export const NodeSelectorRequirement = z
  .object({
    key: LabelKey.describe('The node label key the requirement reads.'),
    operator: NodeSelectorOperator.describe('In, NotIn, Exists, DoesNotExist, Gt or Lt (Gt and Lt compare the label as an integer).'),
    values: z.array(LabelValue).max(256).optional().describe('At least one for In and NotIn, none for Exists and DoesNotExist, exactly one integer for Gt and Lt.'),
  })
  .superRefine((r, ctx) => {
    if (!NodeSelectorOperator.safeParse(r.operator).success) return; // refused by the enum already
    const p = valuesProblem(r.operator, r.values);
    if (p) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} on "${r.key}" ${p}` });
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule:
          `self.operator in ${SET_OPS} ? (has(self.values) && size(self.values) > 0) : ` +
          `self.operator in ${NO_VALUE_OPS} ? (!has(self.values) || size(self.values) == 0) : ` +
          `(has(self.values) && size(self.values) == 1 && self.values[0].matches(${celString(INTEGER_PATTERN)}))`,
        messageExpression:
          `'operator ' + self.operator + ' on "' + self.key + '" ' + ` +
          `(self.operator in ${SET_OPS} ? 'needs values' : self.operator in ${NO_VALUE_OPS} ? 'takes no values' : 'takes exactly one integer value')`,
        fieldPath: '.values',
      },
    ],
  });
export type NodeSelectorRequirement = z.infer<typeof NodeSelectorRequirement>;

/** A Node field requirement: only metadata.name, with In or NotIn and at least one node name (core semantics). */
export const NodeFieldSelectorRequirement = z
  .object({
    key: kubeEnum(['metadata.name']).describe('The only field: metadata.name.'),
    operator: kubeEnum(['In', 'NotIn']).describe('In or NotIn.'),
    values: z
      .array(z.string().max(253).regex(new RegExp(DNS_SUBDOMAIN_PATTERN), { error: (iss) => `${JSON.stringify(iss.input)} is not a node name (a DNS subdomain)` }))
      .max(256)
      .optional()
      .describe('Node names, at least one.'),
  })
  .superRefine((r, ctx) => {
    if ((r.values?.length ?? 0) === 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} on "${r.key}" needs values` });
  })
  .meta({
    'x-kubernetes-validations': [{ rule: 'has(self.values) && size(self.values) > 0', messageExpression: `'operator ' + self.operator + ' on "' + self.key + '" needs values'`, fieldPath: '.values' }],
  });
export type NodeFieldSelectorRequirement = z.infer<typeof NodeFieldSelectorRequirement>;

const termIsEmpty = (t: { matchExpressions?: unknown[]; matchFields?: unknown[] }) => !t.matchExpressions?.length && !t.matchFields?.length;

export const NodeSelectorTerm = z
  .object({
    matchExpressions: z.array(NodeSelectorRequirement).max(64).optional().describe('Requirements on the node\'s labels, ANDed.'),
    matchFields: z.array(NodeFieldSelectorRequirement).max(64).optional().describe('Requirements on the node\'s name, ANDed with matchExpressions.'),
  })
  .superRefine((t, ctx) => {
    if (termIsEmpty(t)) ctx.addIssue({ code: 'custom', message: EMPTY_SELECTOR_MESSAGE });
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: '(has(self.matchExpressions) && size(self.matchExpressions) > 0) || (has(self.matchFields) && size(self.matchFields) > 0)', message: EMPTY_SELECTOR_MESSAGE },
    ],
  });
export type NodeSelectorTerm = z.infer<typeof NodeSelectorTerm>;

/**
 * core/v1 NodeSelector: terms ORed, requirements inside a term ANDed. No terms, or a term without
 * requirements, matches nothing in Kubernetes: always a mistake here, so refused (NM-4.1). Absent
 * terms default to [] so that the refusal says so in these words rather than "Required value".
 */
export const NodeSelector = z
  .object({ nodeSelectorTerms: z.array(NodeSelectorTerm).max(64).default([]).describe('Terms, ORed; at least one, none of them empty.') })
  .superRefine((s, ctx) => {
    if (s.nodeSelectorTerms.length === 0) ctx.addIssue({ code: 'custom', path: ['nodeSelectorTerms'], message: EMPTY_SELECTOR_MESSAGE });
  })
  .meta({
    'x-kubernetes-validations': [{ rule: 'has(self.nodeSelectorTerms) && size(self.nodeSelectorTerms) > 0', message: EMPTY_SELECTOR_MESSAGE, fieldPath: '.nodeSelectorTerms' }],
  });
export type NodeSelector = z.infer<typeof NodeSelector>;

/**
 * A drain-plan entry as NodeMaintenance takes it: podPriority required (NM-1.4, spec §8.9). The
 * schema leaves it optional so that the refusal names it: a required property would stop the
 * apiserver at "Required value" before any CEL rule ran.
 */
export const MaintenancePlanEntry = z
  .object({
    podType: kubeEnum(['Default', 'DaemonSet', 'Static']).default('Default').describe('Which pods: Default (every pod not of a DaemonSet and not static), DaemonSet or Static.'),
    podPriority: z.int32().optional().describe('Pods of priority up to this value (inclusive); required.'),
    podSelector: LabelSelector.optional().describe('Only pods with these labels. Unset: every pod of the type and priority.'),
  })
  .superRefine((e, ctx) => {
    if (e.podPriority === undefined) ctx.addIssue({ code: 'custom', path: ['podPriority'], message: 'podPriority is required' });
  })
  .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.podPriority)', message: 'podPriority is required', fieldPath: '.podPriority' }] });
export type MaintenancePlanEntry = PlanEntry;

const MAX_PLAN_ENTRIES = 64;
const PLAN_ORDER_MESSAGE = 'entries must be ordered Default, DaemonSet, Static, then by podPriority ascending, with podSelector entries before the entry without one at equal priority';
const DUPLICATE_MESSAGE = 'Duplicate entries are not allowed';
// key(e) as one integer (NM-4.4): (typeRank·2³² + podPriority + 2³¹)·2 + (podSelector ? 0 : 1); ≤ 2.6e10, no overflow.
const celKey = (e: string) =>
  `((${e}.podType == 'DaemonSet' ? 1 : ${e}.podType == 'Static' ? 2 : 0) * 4294967296 + (has(${e}.podPriority) ? ${e}.podPriority : 0) + 2147483648) * 2 + (has(${e}.podSelector) ? 0 : 1)`;

/** The drain engine's options minus drainPlan (spec.drainPlan is the plan), plus the evacuation deadline (NM-5.1). */
export const MaintenanceDrainOptions = DrainOptions.omit({ drainPlan: true })
  .extend({
    evacuationProgressDeadline: duration(DURATION_BOUNDS.evacuationProgressDeadline).default('30m').describe('How long an evacuator may go without a heartbeat before the next one (or eviction) takes over.'),
    /**
     * Refused, never stored: the plan is spec.drainPlan. In the schema (as any list) only so that
     * admission refuses it by name instead of pruning it silently.
     */
    drainPlan: z.array(z.looseObject({})).optional().describe('Refused: a maintenance\'s plan is spec.drainPlan.'),
  })
  .superRefine((d, ctx) => {
    if (d.drainPlan !== undefined) ctx.addIssue({ code: 'custom', path: ['drainPlan'], message: 'use spec.drainPlan' });
  })
  .meta({ 'x-kubernetes-validations': [{ rule: '!has(self.drainPlan)', message: 'use spec.drainPlan', fieldPath: '.drainPlan' }] })
  .describe('How the drain evicts pods: timeouts, rates, the evacuation deadline. Frozen once the maintenance has left Idle.');

// Transition rules (NM-2.1, NM-4.6), on the spec: they see the old object as oldSelf.
const left = "oldSelf.stage != 'Idle'";
const sameOptional = (f: string) => `has(self.${f}) == has(oldSelf.${f}) && (!has(self.${f}) || self.${f} == oldSelf.${f})`;
const FROZEN_MESSAGE = (field: string) => `spec.${field} cannot change once the maintenance has left Idle`;
const IMMUTABLE_PLAN_MESSAGE = 'spec.drainPlan is immutable';

export const NodeMaintenanceSpecFields = z
  .object({
    nodeSelector: NodeSelector.describe('The nodes to maintain (a core/v1 NodeSelector: terms ORed, requirements ANDed). Frozen once the maintenance has left Idle.'),
    stage: MaintenanceStage.default('Idle')
      .meta({
        'x-kubernetes-validations': [{ rule: `${STAGE_RANK}[self] >= ${STAGE_RANK}[oldSelf]`, messageExpression: "'spec.stage cannot go back from ' + oldSelf + ' to ' + self" }],
      })
      .describe('Idle (default: a preview, nothing changes), Cordon, Drain or Complete (uncordon, release the nodes). Forward only; skipping a stage is allowed.'),
    drainPlan: z
      .array(MaintenancePlanEntry)
      .max(MAX_PLAN_ENTRIES)
      .default(() => DEFAULT_DRAIN_PLAN.map((e) => ({ ...e })))
      .meta({
        'x-kubernetes-validations': [
          // Entry i is out of order when it sorts before entry i - 1; the later of two equal entries is the duplicate.
          entryRule('drainPlan', MAX_PLAN_ENTRIES, `i > 0 && ${celKey('self[i - 1]')} > ${celKey('e')}`, PLAN_ORDER_MESSAGE),
          entryRule('drainPlan', MAX_PLAN_ENTRIES, repeatsEarlier(), DUPLICATE_MESSAGE),
        ],
      })
      .describe('The drain\'s steps, in order: Default, DaemonSet, Static, each by podPriority ascending. Absent: the 12 default steps. Immutable.'),
    reason: z.string().max(MAX_MAINTENANCE_REASON).optional().describe('Why the maintenance is done, for people (at most 1024 characters).'),
    drain: MaintenanceDrainOptions.optional(),
    rollout: NodeMaintenanceRollout.optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.drainPlan.some((e) => e.podPriority === undefined)) return; // refused per entry already
    const err = planOrderError(spec.drainPlan as PlanEntry[]);
    const m = err && /^spec\.drainPlan\[(\d+)\]: (.*)$/.exec(err);
    if (m) ctx.addIssue({ code: 'custom', path: ['drainPlan', Number(m[1])], message: m[2]! });
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'self.drainPlan == oldSelf.drainPlan', message: IMMUTABLE_PLAN_MESSAGE, fieldPath: '.drainPlan' },
      { rule: `!(${left}) || self.nodeSelector == oldSelf.nodeSelector`, message: FROZEN_MESSAGE('nodeSelector'), fieldPath: '.nodeSelector' },
      { rule: `!(${left}) || (${sameOptional('drain')})`, message: FROZEN_MESSAGE('drain'), fieldPath: '.drain' },
      { rule: `!(${left}) || (${sameOptional('rollout')})`, message: FROZEN_MESSAGE('rollout'), fieldPath: '.rollout' },
    ],
  })
  .describe('Which nodes, which stage, and how to drain them.');

type SpecFields = z.output<typeof NodeMaintenanceSpecFields>;
/** The drain options a maintenance runs with (drainPlan refused). */
export type MaintenanceDrainOptions = Omit<NonNullable<SpecFields['drain']>, 'drainPlan'>;
/** The parsed spec: every plan entry has its podPriority, and drain has no drainPlan. */
export type NodeMaintenanceSpec = Omit<SpecFields, 'drainPlan' | 'drain'> & { drainPlan: PlanEntry[]; drain?: MaintenanceDrainOptions };
export const NodeMaintenanceSpec = NodeMaintenanceSpecFields.transform(({ drain, drainPlan, ...rest }): NodeMaintenanceSpec => {
  const plan = drainPlan as PlanEntry[];
  if (!drain) return { ...rest, drainPlan: plan };
  const { drainPlan: _refused, ...options } = drain;
  return { ...rest, drainPlan: plan, drain: options };
});
export type NodeMaintenanceSpecInput = z.input<typeof NodeMaintenanceSpec>;

/**
 * What the CRD's transition rules refuse in an edit from `old` to `next` (parsed specs), in the same
 * words: for the workflow's specChanged validator (NM-2.16), where a refusal means CEL was bypassed.
 */
export function specTransitionErrors(old: NodeMaintenanceSpec, next: NodeMaintenanceSpec): string[] {
  const out: string[] = [];
  const rank = (s: MaintenanceStage) => MaintenanceStage.options.indexOf(s);
  if (rank(next.stage) < rank(old.stage)) out.push(stageBackMessage(old.stage, next.stage));
  if (!sameJson(old.drainPlan, next.drainPlan)) out.push(IMMUTABLE_PLAN_MESSAGE);
  if (old.stage !== 'Idle') {
    if (!sameJson(old.nodeSelector, next.nodeSelector)) out.push(FROZEN_MESSAGE('nodeSelector'));
    if (!sameJson(old.drain, next.drain)) out.push(FROZEN_MESSAGE('drain'));
    if (!sameJson(old.rollout, next.rollout)) out.push(FROZEN_MESSAGE('rollout'));
  }
  return out;
}

/** JSON equality with object keys in any order (as CEL compares). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

// ---- status (the bridge mirrors workflows/maintenance/types.ts MaintenanceStatus into it) ---------

// Status is written by Slipway only: plain shapes, no CEL (which would cost admission budget per write).
const StatusSelector = z
  .object({
    matchLabels: z.record(z.string(), z.string()).optional().describe('Labels a pod must have, each with exactly this value.'),
    matchExpressions: z
      .array(z.object({ key: z.string().describe('The label key.'), operator: z.string().describe('In, NotIn, Exists or DoesNotExist.'), values: z.array(z.string()).optional().describe('The label values.') }))
      .optional()
      .describe('Requirements a pod must meet, all of them.'),
  })
  .describe('Only pods with these labels.');
/** A plan entry or a drain-target lane, as status shows it. */
export const StatusPlanEntry = z.object({
  podType: z.enum(['Default', 'DaemonSet', 'Static']).describe('Default, DaemonSet or Static.'),
  podPriority: z.int32().describe('Pods of priority up to this value.'),
  podSelector: StatusSelector.optional(),
});
const counts = {
  podsPendingEvictionRequest: z.int32().optional().describe('Pods the drain targets that have not been asked to leave yet.'),
  activeEvictionRequests: z.int32().optional().describe('Pods asked to leave (an eviction or an Evacuation) that have not left yet.'),
  podsBlocked: z.int32().optional().describe('Pods whose eviction is refused now (a PodDisruptionBudget, …).'),
  podsKept: z.int32().optional().describe('Pods the drain leaves on the node (DaemonSet and static pods, a DrainRule Skip).'),
};
export const MaintenanceNodeStatusSchema = z.object({
  nodeRef: z.object({ name: z.string().describe('The Node\'s name.') }).describe('The node.'),
  drainTargets: z.array(StatusPlanEntry).optional().describe('The plan steps this node\'s drain has reached.'),
  drainMessage: z.string().optional().describe('What the node\'s drain waits for now.'),
  ...counts,
  limitedBy: z.array(z.string()).optional().describe('The NodeMaintenance covering the same node whose plan is behind: this drain waits for it.'),
  // A rolling maintenance's node (spec.rollout; docs/rolling-maintenance.md).
  phase: z.enum(ROLLOUT_NODE_PHASES).optional().describe('With spec.rollout: Waiting, Cordoned, Draining, AwaitingWork, Verifying, Done or Failed.'),
  waitingFor: z.string().optional().describe('With spec.rollout, while Waiting: what the node waits for (maxUnavailable, a NodeDisruptionBudget, an earlier partition, a pause, another holder).'),
  phaseTimes: z.array(z.object({ phase: z.enum(ROLLOUT_NODE_PHASES).describe('The phase.'), time: z.string().describe('When the node entered it (RFC 3339).') })).max(8).optional().describe('With spec.rollout: when the node entered each phase.'),
  bootID: z.string().optional().describe('With spec.rollout: the node\'s bootID recorded when it was drained (completion by reboot compares against it).'),
  message: z.string().optional().describe('With spec.rollout: why the node failed, or what its work waits for.'),
});

export const NodeMaintenanceStatus = z.object({
  observedGeneration: ObservedGeneration,
  workflowId: z.string().optional().describe('The Temporal workflow that runs the maintenance.'),
  runId: z.string().optional().describe('The run of that workflow.'),
  selectedNodes: z.int32().optional().describe('Nodes the nodeSelector selects now.'),
  message: z.string().optional().describe('What the maintenance is doing, in one line.'),
  drainPlan: z.array(StatusPlanEntry).optional().describe('The effective plan P(M).'),
  stageStatuses: z.array(z.object({ name: MaintenanceStage.describe('The stage.'), startTimestamp: z.string().describe('When it was entered (RFC 3339).'), requestedBy: z.string().optional().describe('Who asked for it.') })).optional().describe('Stages entered, with when and, for a setStage update, who asked (Temporal\'s caller identity).'),
  drainStatus: z
    .object({
      reachedDrainTargets: z.array(StatusPlanEntry).optional().describe('The plan steps every node\'s drain has reached.'),
      drainMessage: z.string().optional().describe('What the drain waits for now, over all nodes.'),
      ...counts,
    })
    .optional()
    .describe('The drain over all selected nodes; counts are summed.'),
  nodeStatuses: z.array(MaintenanceNodeStatusSchema).max(1000).optional().describe('Sorted by node name, at most 1000; the rest are counted in nodeStatusesOmitted.'),
  nodeStatusesOmitted: z.int32().optional().describe('Nodes left out of nodeStatuses (past the first 1000).'),
  rollout: z
    .object({
      phase: z.enum(ROLLOUT_PHASES).describe('Running, Paused (by an operator), Stopped (maxFailures passed) or Done.'),
      maxUnavailable: z.int32().optional().describe('spec.rollout.maxUnavailable as a number of nodes.'),
      partitions: z.array(z.string()).max(1000).optional().describe('The values of spec.rollout.partitionBy in the order the rollout takes them ("" for nodes without the label, last).'),
      partition: z.string().optional().describe('The partition being rolled now.'),
      waiting: z.int32().describe('Nodes not started yet.'),
      inProgress: z.int32().describe('Nodes Cordoned, Draining, AwaitingWork or Verifying.'),
      done: z.int32().describe('Nodes Done.'),
      failed: z.int32().describe('Nodes Failed.'),
      message: z.string().optional().describe('What the rollout waits for, in one line.'),
    })
    .optional()
    .describe('With spec.rollout: where the rollout stands.'),
  conditions: conditions('Drained, Ready, SelectsAllNodes, RolloutStopped, CannotFinish'),
}).describe('What the maintenance is doing, written by Slipway.');
export type NodeMaintenanceStatus = z.infer<typeof NodeMaintenanceStatus>;

// ---- authorization (NM-4.9) -------------------------------------------------------------------------

export const NODE_DELETE_POLICY = `nodemaintenance-needs-node-delete.${NODE_MAINTENANCE.group}`;

/**
 * KEP-4212 *Admission*: whoever creates, edits or deletes a NodeMaintenance must be allowed to delete
 * Nodes (a maintenance cordons and drains them). VAP cannot list the selected nodes, so the check is
 * cluster-wide nodes/delete (spec §8.13). Not checked: status writes (a subresource), and updates that
 * leave spec and annotations alone (finalizers, labels) or land on an object being deleted (its
 * deletion was checked): those are Slipway's own bookkeeping, e.g. the bridge's finalizer removal.
 */
export function nodeMaintenancePolicies(): Array<Record<string, unknown>> {
  const annotations = (o: string) => `(has(${o}.metadata.annotations) ? ${o}.metadata.annotations : {})`;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: NODE_DELETE_POLICY },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [NODE_MAINTENANCE.group], apiVersions: [NODE_MAINTENANCE.version], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: [NODE_MAINTENANCE.plural] }],
        },
        matchConditions: [
          {
            name: 'user-intent',
            expression: `request.operation != 'UPDATE' || (!has(oldObject.metadata.deletionTimestamp) && (object.spec != oldObject.spec || ${annotations('object')} != ${annotations('oldObject')}))`,
          },
        ],
        validations: [
          {
            expression: "authorizer.group('').resource('nodes').check('delete').allowed()",
            messageExpression: `'NodeMaintenance ' + (request.operation == 'DELETE' ? oldObject : object).metadata.name + ': user ' + request.userInfo.username + ' may not delete nodes (nodes/delete); a NodeMaintenance cordons and drains nodes, so it needs that permission'`,
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: NODE_DELETE_POLICY },
      spec: { policyName: NODE_DELETE_POLICY, validationActions: ['Deny'] },
    },
  ];
}
