// How a drain behaves: shared by node cycling and node maintenance, so one type (and one CRD
// schema fragment) serves both.
import { z } from 'zod';
import { kubeEnum } from './admission.js';
import { duration, DURATION_BOUNDS } from './duration.js';
import { LabelSelector } from './label-selector.js';

/** What to do with a pod whose eviction has been refused (PDB) for longer than `after`. */
export const PodEvictionTimeoutPolicy = kubeEnum(['Wait', 'Fail', 'Delete']);
export type PodEvictionTimeoutPolicy = z.infer<typeof PodEvictionTimeoutPolicy>;

export const PodEvictionTimeout = z.object({
  after: duration(DURATION_BOUNDS.podEvictionTimeout).describe('How long a pod may stay blocked before the policy acts.'),
  policy: PodEvictionTimeoutPolicy.default('Wait').describe('Wait: keep trying and report (default). Fail: stop the drain. Delete: delete the pod, honouring its grace period.'),
});

/** KEP-4212 drain plan entry: pods of this type, with priority ≤ podPriority, matching podSelector. */
export const DrainPlanEntry = z.object({
  podType: kubeEnum(['Default', 'DaemonSet', 'Static']).default('Default').describe('Which pods: Default (every pod not of a DaemonSet and not static), DaemonSet or Static.'),
  podPriority: z.int32().optional().describe('Pods of priority up to this value (inclusive). Unset: any priority.'),
  podSelector: LabelSelector.optional().describe('Only pods with these labels. Unset: every pod of the type.'),
}).describe('A drain step: the pods of podType with priority ≤ podPriority matching podSelector, evicted together.');
export type DrainPlanEntry = z.infer<typeof DrainPlanEntry>;

export const DrainOptions = z
  .object({
    podEvictionTimeout: PodEvictionTimeout.optional().describe('What to do with a pod whose eviction stays refused (a PodDisruptionBudget): after how long, and which policy. Unset: wait.'),
    volumeDetachTimeout: duration(DURATION_BOUNDS.volumeDetachTimeout).optional().describe('Stop waiting for volumes to detach after this long (and carry on). Unset: wait as long as it takes.'),
    drainPlan: z.array(DrainPlanEntry).max(64).optional().describe('Drain in these steps instead of by DrainRule order. Default pods that match no entry go last.'),
    evictionConcurrency: z.int32().min(1).max(200).default(16).describe('Evictions in flight at once.'),
    evacuationProgressDeadline: duration(DURATION_BOUNDS.evacuationProgressDeadline).optional().describe('How long an evacuator may go without progress before the next one (or eviction) takes over. Unset: 30m.'),
    evictionQPS: z.number().positive().max(1000).default(50).describe('Client-side limit on eviction requests per second.'),
  })
  .describe('How the drain evicts pods: timeouts, steps, rates. DrainRules apply too.');
export type DrainOptions = z.infer<typeof DrainOptions>;
export type DrainOptionsInput = z.input<typeof DrainOptions>;
