// The evict-a-wave activity, plus the pod deletions the drain needs (finished pods, the Delete
// policy, operator force-deletes). Idempotent: every attempt lists the node's pods first and acts
// only on pods still there with the same uid and no deletionTimestamp, so a retry after a crash
// never evicts a pod twice and never touches a same-name replacement.
import { heartbeat } from '@temporalio/activity';
import type { V1Pod } from '@kubernetes/client-node';
import { podKey, type PodRef } from '../../shared/drain.js';
import { apiStatus, type Kube } from '../kube.js';
import { classifyEvictionError, type EvictionOutcome } from './eviction-errors.js';
import { listNodePods } from './pods.js';
import { mapLimit, TokenBucket } from './rate-limit.js';
import { failpoint } from '../../shared/failpoint.js';

export interface EvictInput {
  nodeName: string;
  pods: PodRef[];
  /** Overrides the pods' own grace period (1 s on an unreachable node). */
  gracePeriodSeconds?: number;
  concurrency: number;
  qps: number;
}

export interface EvictResult extends PodRef {
  outcome: EvictionOutcome;
  reason?: string;
}

export interface DeleteInput {
  nodeName: string;
  pods: PodRef[];
  /** undefined: the pod's own grace period. 0: immediately (force). */
  gracePeriodSeconds?: number;
}

/** What is on the node now for a pod the workflow names: the pod, or why there is nothing to do. */
export type Current = (p: PodRef) => { pod?: V1Pod; outcome?: EvictionOutcome };

/** A lookup over the node's pods as listed or watched (by namespace/name, checked against the uid). */
export function currentOf(items: Iterable<V1Pod>): Current {
  const byKey = new Map([...items].map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
  return (p) => {
    const pod = byKey.get(podKey(p));
    if (!pod || pod.metadata?.uid !== p.uid) return { outcome: 'Gone' };
    if (pod.metadata?.deletionTimestamp) return { pod, outcome: 'AlreadyTerminating' };
    return { pod };
  };
}

async function currentPods(kube: Kube, nodeName: string): Promise<Current> {
  return currentOf((await listNodePods(kube, nodeName)).items);
}

export interface EvictOptions {
  gracePeriodSeconds?: number;
  concurrency: number;
  qps: number;
  /** Called after each pod (activity heartbeat). */
  onEach?: (done: number) => void;
  /** Once aborted, no further eviction is sent (those pods come back NotTried). */
  signal?: AbortSignal;
}

/**
 * Evicts the pods that are still on the node with the same uid and not yet terminating (the uid is
 * also a precondition of the eviction), at most `concurrency` at once and `qps` per second.
 */
export async function evictPresent(kube: Kube, pods: PodRef[], current: Current, o: EvictOptions): Promise<EvictResult[]> {
  const bucket = new TokenBucket(o.qps, Math.max(1, Math.ceil(o.qps)));
  let done = 0;
  return mapLimit(pods, o.concurrency, async (p): Promise<EvictResult> => {
    const c = current(p);
    if (c.outcome) return { ...p, outcome: c.outcome };
    await bucket.take();
    if (o.signal?.aborted) return { ...p, outcome: 'NotTried' };
    try {
      await kube.core.createNamespacedPodEviction({
        name: p.name,
        namespace: p.namespace,
        body: {
          metadata: { name: p.name, namespace: p.namespace },
          deleteOptions: { preconditions: { uid: p.uid }, gracePeriodSeconds: o.gracePeriodSeconds },
        },
      });
      return { ...p, outcome: 'Evicted' };
    } catch (err) {
      return { ...p, ...classifyEvictionError(err) };
    } finally {
      o.onEach?.(++done);
    }
  });
}

/** The answers that mean the pod is on its way out (or already gone). */
export const isLeaving = (r: EvictResult) => r.outcome === 'Evicted' || r.outcome === 'AlreadyTerminating' || r.outcome === 'Gone';

export function createEvictActivities(kube: Kube) {
  return {
    async evictPods(input: EvictInput): Promise<EvictResult[]> {
      const current = await currentPods(kube, input.nodeName);
      const half = Math.ceil(input.pods.length / 2);
      const results = await evictPresent(kube, input.pods, current, {
        ...input,
        onEach: (done) => {
          heartbeat({ evicted: done, of: input.pods.length });
          if (done === half && input.pods.length > 1) failpoint('worker.drain.mid-wave');
        },
      });
      failpoint('worker.drain.after-wave-sent');
      return results;
    },

    async deletePods(input: DeleteInput): Promise<EvictResult[]> {
      const current = await currentPods(kube, input.nodeName);
      return mapLimit(input.pods, 8, async (p): Promise<EvictResult> => {
        const c = current(p);
        // An already-terminating pod may still be force-deleted (grace 0 shortens its deadline).
        if (c.outcome === 'Gone' || (c.outcome === 'AlreadyTerminating' && input.gracePeriodSeconds !== 0)) return { ...p, outcome: c.outcome };
        try {
          await kube.core.deleteNamespacedPod({
            name: p.name,
            namespace: p.namespace,
            gracePeriodSeconds: input.gracePeriodSeconds,
            body: { preconditions: { uid: p.uid }, gracePeriodSeconds: input.gracePeriodSeconds },
          });
          return { ...p, outcome: 'Evicted' };
        } catch (err) {
          const s = apiStatus(err);
          if (s === 404 || s === 409) return { ...p, outcome: 'Gone' };
          return { ...p, outcome: 'Failed', reason: `failed to delete Pod: ${(err as Error).message}` };
        }
      });
    },
  };
}
