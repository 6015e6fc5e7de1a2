// How a drain behaves: shared by node cycling and node maintenance, so one type (and one CRD
// schema fragment) serves both.
import { z } from 'zod';
import { Duration } from './duration.js';
import { LabelSelector, selectorErrors } from './label-selector.js';

/** What to do with a pod whose eviction has been refused (PDB) for longer than `after`. */
export const PodEvictionTimeoutPolicy = z.enum(['Wait', 'Fail', 'Delete']);
export type PodEvictionTimeoutPolicy = z.infer<typeof PodEvictionTimeoutPolicy>;

export const PodEvictionTimeout = z.object({
  /** How long a pod may stay blocked before the policy acts. */
  after: Duration,
  /** Wait: keep trying and report (default). Fail: stop the drain. Delete: delete the pod, honouring its grace period. */
  policy: PodEvictionTimeoutPolicy.default('Wait'),
});

/** KEP-4212 drain plan entry: pods of this type, with priority ≤ podPriority, matching podSelector. */
export const DrainPlanEntry = z.object({
  podType: z.enum(['Default', 'DaemonSet', 'Static']).default('Default'),
  podPriority: z.int32().optional(),
  podSelector: LabelSelector.optional(),
});
export type DrainPlanEntry = z.infer<typeof DrainPlanEntry>;

export const DrainOptions = z
  .object({
    podEvictionTimeout: PodEvictionTimeout.optional(),
    /** Stop waiting for volumes to detach after this long (and carry on). Unset: wait as long as it takes. */
    volumeDetachTimeout: Duration.optional(),
    /** Drain in these steps instead of by DrainRule order (KEP-4212). Default pods that match no entry go last. */
    drainPlan: z.array(DrainPlanEntry).max(64).optional(),
    /** Evictions in flight at once. */
    evictionConcurrency: z.int32().min(1).max(200).default(16),
    /** Client-side limit on eviction requests per second. */
    evictionQPS: z.number().positive().max(1000).default(50),
  })
  .superRefine((o, ctx) => {
    (o.drainPlan ?? []).forEach((e, i) => {
      for (const err of selectorErrors(e.podSelector)) ctx.addIssue({ code: 'custom', path: ['drainPlan', i, 'podSelector'], message: err });
    });
  });
export type DrainOptions = z.infer<typeof DrainOptions>;
export type DrainOptionsInput = z.input<typeof DrainOptions>;
