// Evacuation instead of eviction (NM-5.1–5.5, 5.7): for each due pod with evacuators, carry its
// Evacuation forward by as many steps as are due now (create or join, activate, hand over, fall back)
// and say where it stands. The decision is shared/evacuation.ts, taken on a fresh read with the times
// the object records, so a retry after a crash at any line neither duplicates the object nor restarts
// a deadline. Hand-overs and the fallback are recorded as Events on the Evacuation.
import { heartbeat } from '@temporalio/activity';
import { EVACUATION } from '../../api/evacuation.js';
import { nextEvacuationStep, type EvacuationStep } from '../../shared/evacuation.js';
import { podKey, type PodRef } from '../../shared/drain.js';
import { createEventActivities } from '../events.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { createEvacuationActivities, type EvacuationObject } from './evacuation.js';
import { decisionCheck, type DecisionCheck } from './decisions.js';
import { API_VERSION } from '../../api/names.js';

export interface EvacuateInput {
  nodeName: string;
  pods: PodRef[];
  /** nodemaintenance/<name>, cyclenoderequest/<ns>/<name> or drain/<node>. */
  requester: string;
  /** More requesters that want the pod gone (other maintenances draining the same node, NM-5.6): each joins. */
  alsoRequesters?: Array<{ name: string; reason?: string }>;
  /** The maintenance's reason (NM-5.8), in the requester entry and the Events. */
  reason?: string;
  progressDeadlineSeconds: number;
}

export type EvacuationState =
  /** An evacuator is in control: no eviction, no deletion; look again by `untilMs` at the latest. */
  | { uid: string; state: 'evacuating'; evacuator: string; message: string; untilMs: number }
  /** No evacuator left (NM-5.3): the drain evicts the pod as any other. */
  | { uid: string; state: 'fallback' }
  /** Gone or terminal (NM-5.5). */
  | { uid: string; state: 'left' }
  /** Not asked to leave: the operator skipped or force-deletes it meanwhile (the drain's next pass applies it). */
  | { uid: string; state: 'withdrawn' };

/** Steps one pod's Evacuation may take in one call: create, activate, a hand-over per evacuator, fallback. */
const MAX_STEPS = 12;

export function createEvacuateActivities(kube: Kube) {
  const objects = createEvacuationActivities(kube);
  const { recordEvent } = createEventActivities(kube);

  const event = (o: EvacuationObject, reason: string, message: string, key: string) =>
    recordEvent({
      involved: { kind: EVACUATION.kind, apiVersion: API_VERSION, namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid },
      type: reason === 'EvictionFallback' ? 'Warning' : 'Normal',
      reason,
      message,
      dedupKey: `${o.metadata.uid}/${key}`,
    });

  async function progress(input: EvacuateInput, pod: PodRef, check: DecisionCheck | undefined): Promise<EvacuationState> {
    const ref = { namespace: pod.namespace, name: pod.uid };
    const by = input.reason ? ` (${input.requester}: ${input.reason})` : ` (${input.requester})`;
    let o: EvacuationObject | undefined;
    const read = () =>
      kube.core.readNamespacedPod({ namespace: pod.namespace, name: pod.name }).catch((err: unknown) => {
        if (apiStatus(err) === 404) return undefined;
        throw err;
      });
    // The pod once per call (the steps take milliseconds), and again only if its Evacuation vanished (with it?).
    let live = await read();
    for (let i = 0; i < MAX_STEPS; i++) {
      if (i > 0 && !o) live = await read();
      const presence = live?.metadata?.uid === pod.uid ? { exists: true, phase: live.status?.phase } : { exists: false };
      // Join first: every requester is listed (NM-5.1), whoever created the object.
      if (presence.exists && !o) {
        // Asking an evacuator to move the pod is asking it to leave: not after the operator's decision.
        const v = await check?.(pod, 'drain');
        if (v && !v.go) {
          if (v.unknown) throw new Error(v.why); // retried: never asked blind
          return { uid: pod.uid, state: 'withdrawn' };
        }
        for (const r of [{ name: input.requester, reason: input.reason }, ...(input.alsoRequesters ?? [])]) {
          o = await objects.ensureEvacuation({
            pod: { namespace: pod.namespace, name: pod.name, uid: pod.uid, labels: live!.metadata?.labels, annotations: live!.metadata?.annotations },
            requester: r.name,
            ...(r.reason !== undefined ? { reason: r.reason } : {}),
            progressDeadlineSeconds: input.progressDeadlineSeconds,
          });
        }
      }
      const step: EvacuationStep = nextEvacuationStep(o, presence, Date.now());
      switch (step.kind) {
        case 'done':
          return { uid: pod.uid, state: 'left' };
        case 'create':
          o = undefined; // deleted between the ensure and now: create it again
          continue;
        case 'wait': {
          // The age of the evacuator's last sign of progress, for the status line (NM-5.4).
          const progressMs = step.until - (o?.spec.progressDeadlineSeconds ?? 0) * 1000;
          const age = Math.max(0, Math.round((Date.now() - progressMs) / 1000));
          return { uid: pod.uid, state: 'evacuating', evacuator: step.name, message: `${step.message} (last progress ${age}s ago)`, untilMs: step.until };
        }
        case 'activate':
          o = await objects.setActiveEvacuator({ ...ref, active: step.name });
          if (o) await event(o, 'EvacuatorActivated', `evacuator ${step.name} is active for pod ${podKey(pod)}${by}`, `activate/${step.name}`);
          continue;
        case 'handOver':
          o = await objects.setActiveEvacuator({ ...ref, active: step.to });
          if (o) await event(o, 'EvacuatorHandOver', `${step.from} ${step.reason === 'completed' ? 'withdrew' : `made no progress within ${o.spec.progressDeadlineSeconds}s`}: ${step.to} takes over${by}`, `handover/${step.from}/${step.to}`);
          continue;
        case 'fallback': {
          const already = o?.status?.activeEvacuator === '';
          if (!already) {
            const why = step.from ? `${step.from} ${step.reason === 'completed' ? 'withdrew' : 'made no progress within the deadline'}` : 'no evacuator registered';
            o = await objects.setActiveEvacuator({ ...ref, fallback: true, message: `${why}; no evacuator left: evicting through the eviction API${by}` });
            if (o) await event(o, 'EvictionFallback', `${why}; no evacuator left: pod ${podKey(pod)} is evicted through the eviction API, PDBs respected${by}`, 'fallback');
          }
          return { uid: pod.uid, state: 'fallback' };
        }
      }
    }
    throw new Error(`evacuation of ${podKey(pod)} did not settle in ${MAX_STEPS} steps`);
  }

  return {
    /** Where each pod's evacuation stands, after the steps due now (NM-5.1–5.5). */
    async progressEvacuations(input: EvacuateInput): Promise<EvacuationState[]> {
      const out: EvacuationState[] = [];
      const check = decisionCheck();
      for (const pod of input.pods) {
        out.push(await progress(input, pod, check));
        heartbeat({ done: out.length, of: input.pods.length });
      }
      return out;
    },

    /** NM-5.3: the refusals of fallen-back pods' evictions, as counted by the drain (the stored count never goes down). */
    async recordFailedEvictions(input: { pods: Array<{ namespace: string; uid: string; failedEvictions: number }> }): Promise<void> {
      for (const p of input.pods) await objects.recordFailedEviction({ namespace: p.namespace, name: p.uid, failedEvictions: p.failedEvictions });
    },

    /** NM-5.6 / NM-5.7: this requester leaves these pods' Evacuations (the last one out deletes unless Forbid). */
    async withdrawEvacuations(input: { requester: string; pods: PodRef[] }): Promise<Array<{ uid: string; result: string }>> {
      const out: Array<{ uid: string; result: string }> = [];
      for (const pod of input.pods) {
        out.push({ uid: pod.uid, result: await objects.withdrawEvacuation({ namespace: pod.namespace, name: pod.uid, requester: input.requester }) });
        heartbeat({ done: out.length, of: input.pods.length });
      }
      return out;
    },
  };
}
