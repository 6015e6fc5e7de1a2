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
  /** How long a pod may stay blocked before the policy acts. */
  after: duration(DURATION_BOUNDS.podEvictionTimeout),
  /** Wait: keep trying and report (default). Fail: stop the drain. Delete: delete the pod, honouring its grace period. */
  policy: PodEvictionTimeoutPolicy.default('Wait'),
});

/** KEP-4212 drain plan entry: pods of this type, with priority ≤ podPriority, matching podSelector. */
export const DrainPlanEntry = z.object({
  podType: kubeEnum(['Default', 'DaemonSet', 'Static']).default('Default'),
  podPriority: z.int32().optional(),
  podSelector: LabelSelector.optional(),
});
export type DrainPlanEntry = z.infer<typeof DrainPlanEntry>;

export const DrainOptions = z
  .object({
    podEvictionTimeout: PodEvictionTimeout.optional(),
    /** Stop waiting for volumes to detach after this long (and carry on). Unset: wait as long as it takes. */
    volumeDetachTimeout: duration(DURATION_BOUNDS.volumeDetachTimeout).optional(),
    /** Drain in these steps instead of by DrainRule order (KEP-4212). Default pods that match no entry go last. */
    drainPlan: z.array(DrainPlanEntry).max(64).optional(),
    /** Evictions in flight at once. */
    evictionConcurrency: z.int32().min(1).max(200).default(16),
    /** How long an evacuator may go without progress before the next one (or eviction) takes over (NM-5.2). Unset: 30m. */
    evacuationProgressDeadline: duration(DURATION_BOUNDS.evacuationProgressDeadline).optional(),
    /** Client-side limit on eviction requests per second. */
    evictionQPS: z.number().positive().max(1000).default(50),
  });
export type DrainOptions = z.infer<typeof DrainOptions>;
export type DrainOptionsInput = z.input<typeof DrainOptions>;
