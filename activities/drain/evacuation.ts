// The Evacuation object's writes (NM-5.1–5.7): create it for a due pod (or join it as one more
// requester), make an evacuator active or fall back to eviction, count refused evictions, withdraw.
// Each is idempotent: it reads the object, computes what it should be, and writes only a difference.
// Writes that replace a list carry the resourceVersion they were computed from (409, then read again),
// so an evacuator's heartbeat or another requester's entry written meanwhile is never overwritten.
import { createHash } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import {
  ACTIVE_EVACUATOR_LABEL,
  EVACUATION,
  EVACUATION_CONDITION,
  evacuatorsOf,
  withdraw,
  type EvacuationSpec,
  type EvacuationStatus,
  type EvacuatorStatus,
} from '../../api/evacuation.js';
import type { Condition } from '../../api/cycle-node-request.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { mergePatch, serverSideApply } from '../../kube/patch.js';
import { API_VERSION } from '../../api/names.js';

export const FIELD_MANAGER = 'slipway';
/** Conflicts (another writer got there first) are retried from a fresh read this many times. */
const MAX_ATTEMPTS = 20;

export interface EvacuationObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
    deletionTimestamp?: string;
  };
  spec: EvacuationSpec;
  /** As stored: any field may be missing (cancellationPolicy absent means Allow). */
  status?: Partial<EvacuationStatus>;
}

/** The pod as classify saw it: enough to create its Evacuation without reading the pod again. */
export interface EvacuationPod {
  namespace: string;
  name: string;
  uid: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface EnsureEvacuationInput {
  pod: EvacuationPod;
  /** nodemaintenance/<name>, cyclenoderequest/<ns>/<name> or drain/<node> (api/evacuation.ts). */
  requester: string;
  reason?: string;
  /** From spec.drain.evacuationProgressDeadline (NM-5.1); used only when this call creates the object. */
  progressDeadlineSeconds: number;
}

export interface EvacuationRef {
  /** The pod's namespace. */
  namespace: string;
  /** The pod's UID (the Evacuation's name). */
  name: string;
}

/**
 * The field manager of one requester's entry in spec.requesters: server-side apply by it touches
 * only that entry (a map list keyed by name), so two requesters joining at once both stay. At most
 * 128 characters (the apiserver's limit): long names are cut and made unique with a hash.
 */
export function requesterFieldManager(requester: string): string {
  const m = `${FIELD_MANAGER}:${requester}`;
  return m.length <= 128 ? m : `${m.slice(0, 111)}~${createHash('sha256').update(requester).digest('hex').slice(0, 16)}`;
}

/** metav1.Condition upsert: the transition time moves only when the status does. */
function setCondition(list: Condition[] | undefined, c: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const old = list?.find((x) => x.type === c.type);
  const next: Condition = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
  return [...(list ?? []).filter((x) => x.type !== c.type), next];
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function createEvacuationActivities(kube: Kube) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  const where = (ref: EvacuationRef) => ({ group: EVACUATION.group, version: EVACUATION.version, plural: EVACUATION.plural, namespace: ref.namespace, name: ref.name });

  async function read(ref: EvacuationRef): Promise<EvacuationObject | undefined> {
    try {
      return (await api.getNamespacedCustomObject(where(ref))) as EvacuationObject;
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  }

  /**
   * Read, change, write the status with the resourceVersion read, until it lands. `change` returns
   * the new status, or undefined when there is nothing to write. Undefined: the Evacuation is gone.
   */
  async function updateStatus(ref: EvacuationRef, change: (o: EvacuationObject) => Partial<EvacuationStatus> | undefined): Promise<EvacuationObject | undefined> {
    for (let attempt = 1; ; attempt++) {
      const o = await read(ref);
      if (!o) return undefined;
      const changed = change(o);
      if (!changed) return o;
      const status = o.metadata.generation === undefined ? changed : { ...changed, observedGeneration: o.metadata.generation };
      try {
        return (await api.patchNamespacedCustomObjectStatus({ ...where(ref), body: { metadata: { resourceVersion: o.metadata.resourceVersion }, status } }, mergePatch)) as EvacuationObject;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        if (apiStatus(err) !== 409 || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  return {
    /**
     * NM-5.1: the pod's Evacuation with `requester` among its requesters. Creates it (name = pod UID,
     * ownerReference to the Pod, the pod's labels, evacuators resolved from its annotations) or, when
     * it exists, adds this requester's entry by server-side apply under its own field manager, so
     * nobody else's entry is dropped. Returns the object as stored.
     */
    async ensureEvacuation(input: EnsureEvacuationInput): Promise<EvacuationObject> {
      const { pod, requester, reason } = input;
      const ref = { namespace: pod.namespace, name: pod.uid };
      const entry = { name: requester, ...(reason !== undefined && { reason }) };
      for (let attempt = 1; ; attempt++) {
        const existing = await read(ref);
        try {
          if (!existing) {
            const { [ACTIVE_EVACUATOR_LABEL]: _notTheirs, ...labels } = pod.labels ?? {};
            const body = {
              apiVersion: API_VERSION,
              kind: EVACUATION.kind,
              metadata: { name: pod.uid, namespace: pod.namespace, labels, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid }] },
              spec: {
                podRef: { name: pod.name, uid: pod.uid },
                requesters: [entry],
                progressDeadlineSeconds: input.progressDeadlineSeconds,
                evacuators: evacuatorsOf(pod.annotations).evacuators,
              },
            };
            return (await api.createNamespacedCustomObject({ group: EVACUATION.group, version: EVACUATION.version, plural: EVACUATION.plural, namespace: pod.namespace, body, fieldManager: FIELD_MANAGER })) as EvacuationObject;
          }
          if (existing.spec.requesters.some((r) => sameJson(r, entry))) return existing;
          const body = { apiVersion: API_VERSION, kind: EVACUATION.kind, metadata: { name: pod.uid, namespace: pod.namespace, uid: existing.metadata.uid }, spec: { requesters: [entry] } };
          return (await api.patchNamespacedCustomObject({ ...where(ref), body, fieldManager: requesterFieldManager(requester), force: true }, serverSideApply)) as EvacuationObject;
        } catch (err) {
          // 409: created by another requester meanwhile, or (apply with our uid) deleted and recreated;
          // 404/422: deleted between the read and the apply. Read again and take the other branch.
          const code = apiStatus(err);
          if ((code !== 409 && code !== 404 && code !== 422) || attempt >= MAX_ATTEMPTS) throw err;
        }
      }
    },

    /**
     * NM-5.2 / NM-5.3: make `active` the evacuator in control (recording its activatedTime once), or,
     * with `fallback`, none: activeEvacuator "" and EvictionFallback=True. The label
     * evacuator.slipway.dev/active follows, so evacuators can watch with a selector. Undefined: the
     * Evacuation is gone.
     */
    async setActiveEvacuator(input: EvacuationRef & { active?: string; fallback?: boolean; message?: string }): Promise<EvacuationObject | undefined> {
      const active = input.fallback ? '' : (input.active ?? '');
      if (!input.fallback && !active) throw new Error('setActiveEvacuator needs an evacuator name, or fallback');
      const now = new Date().toISOString();
      const updated = await updateStatus(input, (o) => {
        const s = o.status ?? {};
        let evacuators: EvacuatorStatus[] = s.evacuators ?? [];
        let conditions = s.conditions;
        if (active) {
          const mine = evacuators.find((e) => e.name === active);
          if (!mine?.activatedTime) evacuators = [...evacuators.filter((e) => e.name !== active), { ...mine, name: active, activatedTime: now }];
        } else {
          const message = input.message ?? 'no evacuator left: evicting the pod through the eviction API';
          conditions = setCondition(conditions, { type: EVACUATION_CONDITION.evictionFallback, status: 'True', reason: 'NoEvacuatorLeft', message }, now);
        }
        const next = { activeEvacuator: active, evacuators, ...(conditions && { conditions }) };
        return sameJson([s.activeEvacuator, s.evacuators ?? [], s.conditions], [next.activeEvacuator, next.evacuators, next.conditions]) ? undefined : next;
      });
      if (!updated) return undefined;
      const label = updated.metadata.labels?.[ACTIVE_EVACUATOR_LABEL];
      if ((label ?? '') === active) return updated;
      try {
        // null removes the label: in fallback no evacuator should find the pod by it.
        const body = { metadata: { labels: { [ACTIVE_EVACUATOR_LABEL]: active || null } } };
        return (await api.patchNamespacedCustomObject({ ...where(input), body, fieldManager: FIELD_MANAGER }, mergePatch)) as EvacuationObject;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        throw err;
      }
    },

    /**
     * NM-5.3: status.failedEvictions counts the refusals since the fallback began. The caller passes
     * its own count; the stored value becomes the larger of the two, so a retry never counts twice.
     */
    async recordFailedEviction(input: EvacuationRef & { failedEvictions: number }): Promise<EvacuationObject | undefined> {
      return updateStatus(input, (o) => ((o.status?.failedEvictions ?? 0) >= input.failedEvictions ? undefined : { failedEvictions: input.failedEvictions }));
    },

    /**
     * NM-5.6 / NM-5.7: `requester` leaves the Evacuation; the last one out deletes it unless its
     * cancellationPolicy is Forbid. The delete carries the uid and resourceVersion read, so a
     * requester that joined meanwhile is never deleted away.
     */
    async withdrawEvacuation(input: EvacuationRef & { requester: string }): Promise<'deleted' | 'updated' | 'left' | 'gone'> {
      for (let attempt = 1; ; attempt++) {
        const o = await read(input);
        if (!o) return 'gone';
        const w = withdraw(o.spec.requesters, input.requester, o.status?.cancellationPolicy);
        if (w.action === 'leave') return 'left';
        try {
          if (w.action === 'delete') {
            await api.deleteNamespacedCustomObject({ ...where(input), body: { preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion } } });
            return 'deleted';
          }
          const body = { metadata: { resourceVersion: o.metadata.resourceVersion }, spec: { requesters: w.requesters } };
          await api.patchNamespacedCustomObject({ ...where(input), body, fieldManager: FIELD_MANAGER }, mergePatch);
          return 'updated';
        } catch (err) {
          if (apiStatus(err) === 404) return 'gone';
          if (apiStatus(err) !== 409 || attempt >= MAX_ATTEMPTS) throw err;
        }
      }
    },
  };
}
