// The evict-a-wave activity, plus the pod deletions the drain needs (finished pods, the Delete
// policy, operator force-deletes). Idempotent: every attempt lists the node's pods first and acts
// only on pods still there with the same uid and no deletionTimestamp, so a retry after a crash
// never evicts a pod twice and never touches a same-name replacement.
import { heartbeat } from '@temporalio/activity';
import { PolicyV1Api, type V1Pod, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { podKey, type PodRef } from '../../shared/drain.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { classifyEvictionError, type EvictionOutcome } from './eviction-errors.js';
import { evictionAnswered } from '../metrics.js';
import { listNodePods } from './pods.js';
import { mapLimit, TokenBucket } from './rate-limit.js';
import { failpoint } from '../../shared/failpoint.js';
import { currentDrainCaller } from './caller.js';
import { decisionCheck, type DecisionCheck, type Purpose } from './decisions.js';

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
  /** The operator's forceDeletePod: sent unless a later skipPod took the pod back (else: unless any decision names the pod). */
  forced?: boolean;
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
  /** Asked right before each request: an operator decision on the pod stops it (decisions.ts). */
  check?: DecisionCheck;
}

/** The answer for a pod whose request the check stopped, or undefined: send it. */
async function stopped(check: DecisionCheck | undefined, p: PodRef, purpose: Purpose): Promise<EvictResult | undefined> {
  const v = await check?.(p, purpose);
  if (!v || v.go) return undefined;
  // No answer from the drain: retried like a refusal. A decision: never sent, the drain applies it.
  return { ...p, outcome: v.unknown ? 'Failed' : 'Withdrawn', reason: v.why };
}

/**
 * The PDBs of a namespace that hold an admitted disruption for this pod (`status.disruptedPods`):
 * the eviction API recorded the pod there and took it from the budget, but its delete never
 * happened (the evicting client died mid-request: the apiserver answers 504 and keeps the entry).
 * The disruption controller drops such an entry only after 2 minutes; meanwhile every other
 * eviction under the budget is refused. Found by the chaos runner (worker killed mid-wave: 105 s of
 * 429s after the restart).
 */
function admittedDisruptions(kube: Kube) {
  const policy = kube.config.makeApiClient(PolicyV1Api);
  const byNamespace = new Map<string, Promise<V1PodDisruptionBudget[]>>();
  return async (p: PodRef): Promise<string[]> => {
    let pdbs = byNamespace.get(p.namespace);
    if (!pdbs) {
      pdbs = policy.listNamespacedPodDisruptionBudget({ namespace: p.namespace }).then((l) => l.items, () => []);
      byNamespace.set(p.namespace, pdbs);
    }
    return (await pdbs).filter((b) => b.status?.disruptedPods?.[p.name] !== undefined).map((b) => b.metadata!.name!);
  };
}

/**
 * Evicts the pods that are still on the node with the same uid and not yet terminating (the uid is
 * also a precondition of the eviction), at most `concurrency` at once and `qps` per second. A pod
 * whose eviction a PDB admitted earlier without the delete following (see admittedDisruptions) is
 * deleted instead: the budget already counts its disruption, so this finishes that eviction.
 */
export async function evictPresent(kube: Kube, pods: PodRef[], current: Current, o: EvictOptions): Promise<EvictResult[]> {
  const bucket = new TokenBucket(o.qps, Math.max(1, Math.ceil(o.qps)));
  const admitted = admittedDisruptions(kube);
  let done = 0;
  const results = await mapLimit(pods, o.concurrency, async (p): Promise<EvictResult> => {
    const c = current(p);
    if (c.outcome) return { ...p, outcome: c.outcome };
    await bucket.take();
    if (o.signal?.aborted) return { ...p, outcome: 'NotTried' };
    const no = await stopped(o.check, p, 'drain');
    if (no) return no;
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
      const refused = classifyEvictionError(err);
      const by = apiStatus(err) === 429 ? await admitted(p) : [];
      if (!by.length) return { ...p, ...refused };
      return (await stopped(o.check, p, 'drain')) ?? finishAdmittedEviction(kube, p, o.gracePeriodSeconds, by);
    } finally {
      o.onEach?.(++done);
    }
  });
  for (const r of results) evictionAnswered(r.uid, r.outcome, r.reason);
  return results;
}

/** Deletes a pod whose eviction `pdbs` admitted already (uid precondition: never a replacement). */
async function finishAdmittedEviction(kube: Kube, p: PodRef, gracePeriodSeconds: number | undefined, pdbs: string[]): Promise<EvictResult> {
  try {
    await kube.core.deleteNamespacedPod({ name: p.name, namespace: p.namespace, gracePeriodSeconds, body: { preconditions: { uid: p.uid }, gracePeriodSeconds } });
    return { ...p, outcome: 'Evicted', reason: `eviction admitted earlier by PodDisruptionBudget ${pdbs.join(', ')} but not carried out: deleted` };
  } catch (err) {
    const s = apiStatus(err);
    if (s === 404 || s === 409) return { ...p, outcome: 'Gone' };
    return { ...p, outcome: 'Failed', reason: `failed to delete Pod whose eviction was admitted: ${(err as Error).message}` };
  }
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
        check: decisionCheck(),
        onEach: (done) => {
          heartbeat({ evicted: done, of: input.pods.length });
          if (done === half && input.pods.length > 1) {
            const caller = currentDrainCaller();
            if (caller === 'maintenance') failpoint('worker.maintenance.mid-drain');
            else if (caller === 'cli') failpoint('worker.cli-drain.mid-wave');
            else failpoint('worker.drain.mid-wave');
          }
        },
      });
      failpoint('worker.drain.after-wave-sent');
      return results;
    },

    async deletePods(input: DeleteInput): Promise<EvictResult[]> {
      const current = await currentPods(kube, input.nodeName);
      const check = decisionCheck();
      return mapLimit(input.pods, 8, async (p): Promise<EvictResult> => {
        const c = current(p);
        // An already-terminating pod may still be force-deleted (grace 0 shortens its deadline).
        if (c.outcome === 'Gone' || (c.outcome === 'AlreadyTerminating' && input.gracePeriodSeconds !== 0)) return { ...p, outcome: c.outcome };
        const no = await stopped(check, p, input.forced ? 'forceDelete' : 'drain');
        // No answer from the drain: the activity is retried (idempotent), the pod is not deleted blind.
        if (no?.outcome === 'Failed') throw new Error(no.reason);
        if (no) return no;
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
