// spec.rollout of a NodeMaintenance (issue 27): a rolling maintenance walks its nodes a few at a time
// (maxUnavailable, on top of every NodeDisruptionBudget), one partition (a label's value, such as a
// zone) after another, and releases each node once its work is done (a reboot seen by bootID, an
// annotation, or the operator's word), verified by health checks. Absent: every node moves through
// the stages together (KEP-4212). Checked twice from the same text, as zod and as CEL.
// The statements it meets are in docs/rolling-maintenance.md (RM-x.y).
import { z } from 'zod';
import { celString, kubeEnum } from './admission.js';
import { duration } from './duration.js';
import { HealthCheck } from './health-check.js';
import { LabelKey } from './label-selector.js';

/** Node annotation an admin's tooling (or a person) sets to say a node's work is done: its value names the maintenance. */
export const ROLLOUT_DONE_ANNOTATION = 'maintenance.slipway.dev/done';

// ---- maxUnavailable: a count or a percentage of the selected nodes, never 0 -------------------------

export const MAX_ROLLOUT_COUNT = 100_000;
/** 1–100000 (number or digits) or 1%–100%. No backslashes: also a CEL literal. */
export const MAX_UNAVAILABLE_PATTERN = '^([1-9][0-9]{0,4}|100000|(100|[1-9][0-9]?)%)$';
const MAX_UNAVAILABLE_RE = new RegExp(MAX_UNAVAILABLE_PATTERN);
export const MAX_UNAVAILABLE_MESSAGE =
  'maxUnavailable must be a number of nodes from 1 to 100000 or a percentage from 1% to 100% such as "25%" (to stop a rollout, pause it)';

export function isMaxUnavailable(v: unknown): v is number | string {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 1 && v <= MAX_ROLLOUT_COUNT;
  return typeof v === 'string' && MAX_UNAVAILABLE_RE.test(v);
}

export { maxUnavailableOf } from './rollout-count.js';

/**
 * int-or-string as a PDB's maxUnavailable: 2, "2" or "25%" (the CRD marks it x-kubernetes-int-or-string).
 * The CRD checks both forms in one CEL rule, not with `pattern`: a pattern's refusal quotes the
 * regular expression, this one says what a valid value is, in zod's words. maxLength bounds the rule's cost.
 */
export const MaxUnavailable = z
  .any()
  .superRefine((v, ctx) => {
    if (v !== undefined && !isMaxUnavailable(v)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)}: ${MAX_UNAVAILABLE_MESSAGE}` });
  })
  .meta({
    'x-kubernetes-int-or-string': true,
    maxLength: 7,
    'x-kubernetes-validations': [
      {
        rule: `type(self) == int ? (self >= 1 && self <= ${MAX_ROLLOUT_COUNT}) : string(self).matches(${celString(MAX_UNAVAILABLE_PATTERN)})`,
        messageExpression: `(type(self) == int ? string(self) : '"' + string(self) + '"') + ${celString(`: ${MAX_UNAVAILABLE_MESSAGE}`)}`,
      },
    ],
  }) as unknown as z.ZodType<number | string, number | string>;

// ---- completion: how a node's work is judged done ------------------------------------------------

export const NO_COMPLETION_MESSAGE = 'completion must name at least one method: reboot, annotation or manual';

export const RolloutCompletion = z
  .object({
    reboot: z.boolean().optional().describe('Done when the node\'s status.nodeInfo.bootID differs from the one recorded when it was drained, and it is Ready again.'),
    annotation: z.boolean().optional().describe(`Done when the node carries the annotation ${ROLLOUT_DONE_ANNOTATION}: <this maintenance's name>.`),
    manual: z.boolean().optional().describe('Done when an operator says so (slipway maintenance <name> done <node>, or the rolloutNodeDone update). The operator\'s word is accepted whatever the method; this names it the method.'),
    healthChecks: z.array(HealthCheck).max(16).optional().describe('After the work is done and the node uncordoned, it must pass these (as a CycleNodeRequest\'s) before it counts as Done.'),
  })
  .superRefine((c, ctx) => {
    if (!c.reboot && !c.annotation && !c.manual) ctx.addIssue({ code: 'custom', message: NO_COMPLETION_MESSAGE });
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: '(has(self.reboot) && self.reboot) || (has(self.annotation) && self.annotation) || (has(self.manual) && self.manual)', message: NO_COMPLETION_MESSAGE },
    ],
  })
  .describe('How a node\'s work is judged done: any of the methods set to true; then healthChecks.');
export type RolloutCompletion = z.infer<typeof RolloutCompletion>;

/** What happens to a node whose work has not completed within nodeTimeout: it is Failed either way. */
export const NodeTimeoutPolicy = kubeEnum(['KeepCordoned', 'Uncordon']);
export type NodeTimeoutPolicy = z.infer<typeof NodeTimeoutPolicy>;

export const NODE_TIMEOUT_BOUNDS = { min: '1m', max: '168h' } as const;

export const NodeMaintenanceRollout = z
  .object({
    maxUnavailable: MaxUnavailable.default(1).describe('Nodes of this maintenance in maintenance at once (cordoned and not yet released): a count, or a percentage of the selected nodes rounded down (at least 1). Default 1. NodeDisruptionBudgets still apply on top.'),
    partitionBy: LabelKey.optional().describe('A node label (usually topology.kubernetes.io/zone): every node of one value is finished before the next value starts, in the order status.rollout.partitions shows. Nodes without the label go last.'),
    completion: RolloutCompletion,
    nodeTimeout: duration(NODE_TIMEOUT_BOUNDS).optional().describe('How long a node may take from its cordon to its work done. Unset: no limit.'),
    nodeTimeoutPolicy: NodeTimeoutPolicy.default('KeepCordoned').describe('A node past nodeTimeout is marked Failed and either stays cordoned (KeepCordoned, default: held until Complete) or is released (Uncordon).'),
    maxFailures: z.int32().min(0).max(MAX_ROLLOUT_COUNT).default(0).describe('Failed nodes the rollout tolerates; one more stops it before it takes another node (default 0).'),
  })
  .describe('Walk the selected nodes a few at a time, releasing each once its work is done. Absent: every node moves through the stages together. Set while Idle only.');
export type NodeMaintenanceRollout = z.output<typeof NodeMaintenanceRollout>;
export type NodeMaintenanceRolloutInput = z.input<typeof NodeMaintenanceRollout>;

// ---- per-node phases and the rollout's own state (status.nodeStatuses[].phase, status.rollout) -----

/**
 * A node's way through a rollout: Waiting (not started: the budget, maxUnavailable, the partition or
 * a pause), Cordoned, Draining, AwaitingWork (drained, its bootID recorded), Verifying (work done,
 * released, health checks), Done; Failed (timed out or its drain failed).
 */
export const ROLLOUT_NODE_PHASES = ['Waiting', 'Cordoned', 'Draining', 'AwaitingWork', 'Verifying', 'Done', 'Failed'] as const;
export type RolloutNodePhase = (typeof ROLLOUT_NODE_PHASES)[number];

/** The rollout as a whole: Running, Paused (by an operator), Stopped (maxFailures passed), Done. */
export const ROLLOUT_PHASES = ['Running', 'Paused', 'Stopped', 'Done'] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];
