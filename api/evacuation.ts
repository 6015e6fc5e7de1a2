// Evacuation (slipway.dev/v1alpha1, namespaced): KEP-4563's EvictionRequest as a CRD (spec §5,
// NM-5.1–5.8). One per pod (name = the pod's UID, ownerReference to the Pod, so it goes with the pod).
// Slipway's requesters ask for the pod to leave; the pod's evacuators (registered by annotations)
// move it out one at a time, highest priority first, and Slipway evicts only when none is left.
// The CRD schema is generated from here.
import { z } from 'zod';
import { kubeEnum } from './admission.js';
import { conditions, ObservedGeneration } from './cycle-node-request.js';

export { EVACUATION } from './names.js';

// ---- names evacuators read and write (spec §5 "Registration", "Labels") -------------------------

/** Pod annotation `evacuator.slipway.dev/<evacuator-name>: "<priority>"` registers an evacuator. */
export const EVACUATOR_ANNOTATION_PREFIX = 'evacuator.slipway.dev/';
/** Evacuation label: the active evacuator's name, so evacuators can watch with a label selector. */
export const ACTIVE_EVACUATOR_LABEL = 'evacuator.slipway.dev/active';
export const MIN_EVACUATOR_PRIORITY = 0;
export const MAX_EVACUATOR_PRIORITY = 100_000;
/** Conditions Slipway sets on the Evacuation's status. */
export const EVACUATION_CONDITION = { evictionFallback: 'EvictionFallback', evacuated: 'Evacuated' } as const;

// An evacuator's name is the name part of the annotation key, and it becomes a label value
// (ACTIVE_EVACUATOR_LABEL): so it must be both, i.e. 1–63 letters, digits, '-', '_', '.'.
export const EVACUATOR_NAME_PATTERN = '^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
const EVACUATOR_NAME_RE = new RegExp(EVACUATOR_NAME_PATTERN);
// Canonical decimal only ("007", "+5", " 5" and "5.0" are refused): the annotation is compared as text elsewhere.
const PRIORITY_RE = /^(0|[1-9][0-9]{0,5})$/;

const EvacuatorName = z.string().min(1).max(63).regex(EVACUATOR_NAME_RE).meta({ pattern: EVACUATOR_NAME_PATTERN });

// ---- spec ----------------------------------------------------------------------------------------

export const Requester = z.object({
  name: z.string().min(1).max(512).describe('nodemaintenance/<name>, cyclenoderequest/<ns>/<name> or drain/<node>.'),
  reason: z.string().max(1024).optional().describe('Why it asks (a NodeMaintenance\'s spec.reason).'),
});
export type Requester = z.infer<typeof Requester>;

export const EvacuatorRef = z.object({
  name: EvacuatorName.describe('The evacuator\'s name: the name part of its pod annotation evacuator.slipway.dev/<name>.'),
  priority: z.int32().min(MIN_EVACUATOR_PRIORITY).max(MAX_EVACUATOR_PRIORITY).describe('Its priority, 0 to 100000: the highest goes first.'),
});
export type EvacuatorRef = z.infer<typeof EvacuatorRef>;

const IMMUTABLE = (field: string) => `spec.${field} is immutable`;

export const EvacuationSpec = z
  .object({
    podRef: z
      .object({ name: z.string().min(1).max(253).describe('The pod\'s name (in the Evacuation\'s namespace).'), uid: z.string().min(1).max(128).describe('The pod\'s UID: a new pod of the same name is not this one.') })
      .describe('The pod to move. Immutable.'),
    // A map list keyed by name: each requester adds or removes its own entry (server-side apply
    // with its own field manager) without overwriting the others' (NM-5.1, NM-5.6).
    requesters: z
      .array(Requester)
      .max(64)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .describe('Who asks for the pod to leave, one entry each; the pod stays when the last withdraws (unless status.cancellationPolicy is Forbid).'),
    progressDeadlineSeconds: z.int32().min(10).max(21_600).default(1800).describe('Seconds an evacuator may go without a heartbeat before the next one (or eviction) takes over; 10 to 21600, default 1800.'),
    evacuators: z
      .array(EvacuatorRef)
      .max(64)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .describe('The pod\'s evacuators, read from its annotations at creation, highest priority first, ties by name. Immutable.'),
  })
  // The map lists' one entry per name, as the apiserver refuses a second: naming the entry.
  .superRefine((s, ctx) => {
    for (const field of ['requesters', 'evacuators'] as const) {
      const seen = new Set<string>();
      s[field].forEach((e, i) => {
        if (seen.has(e.name)) ctx.addIssue({ code: 'custom', path: [field, i], message: `Duplicate value: ${JSON.stringify({ name: e.name })}` });
        seen.add(e.name);
      });
    }
  })
  .meta({
    // On the spec (not on the fields), so that removing a field is refused as well as changing it.
    'x-kubernetes-validations': [
      { rule: 'self.podRef == oldSelf.podRef', message: IMMUTABLE('podRef'), fieldPath: '.podRef' },
      { rule: 'has(self.evacuators) == has(oldSelf.evacuators) && (!has(self.evacuators) || self.evacuators == oldSelf.evacuators)', message: IMMUTABLE('evacuators'), fieldPath: '.evacuators' },
    ],
  })
  .describe('The pod, who asks for it to leave, and who may move it.');
export type EvacuationSpec = z.infer<typeof EvacuationSpec>;
export type EvacuationSpecInput = z.input<typeof EvacuationSpec>;

// ---- status --------------------------------------------------------------------------------------

export const CancellationPolicy = kubeEnum(['Allow', 'Forbid']);
export type CancellationPolicy = z.infer<typeof CancellationPolicy>;

/** One evacuator's progress: Slipway writes activatedTime, the evacuator the rest. */
export const EvacuatorStatus = z.object({
  name: EvacuatorName.describe('The evacuator\'s name.'),
  activatedTime: z.string().optional().describe('When it was given control (RFC 3339), written by Slipway.'),
  heartbeatTime: z.string().optional().describe('Its last sign of progress (RFC 3339); older than progressDeadlineSeconds, control passes on.'),
  completed: z.boolean().optional().describe('The evacuator is done with the pod (or withdraws): control passes to the next.'),
  message: z.string().max(1024).optional().describe('What the evacuator is doing, for people.'),
});
export type EvacuatorStatus = z.infer<typeof EvacuatorStatus>;

export const EvacuationStatus = z.object({
  observedGeneration: ObservedGeneration,
  activeEvacuator: z.string().max(63).optional().describe('The evacuator in control; "" once none is left and Slipway evicts.'),
  // Keyed by name, so an evacuator can apply its own entry's heartbeat without touching the others.
  evacuators: z
    .array(EvacuatorStatus)
    .max(64)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
    .describe('Each evacuator\'s progress, one entry each: an evacuator writes its own entry\'s heartbeatTime, completed and message.'),
  cancellationPolicy: CancellationPolicy.default('Allow').describe('Forbid: the pod keeps leaving when the last requester withdraws. Absent means Allow.'),
  failedEvictions: z.int32().min(0).optional().describe('Eviction refusals since the fallback began.'),
  conditions: conditions('EvictionFallback (no evacuator made progress: Slipway evicts), Evacuated (the pod is gone)'),
}).describe('Who is moving the pod and how it goes, written by Slipway and the evacuators.');
export type EvacuationStatus = z.infer<typeof EvacuationStatus>;

// ---- registration ----------------------------------------------------------------------------------

export interface EvacuatorsOf {
  /** Valid registrations, highest priority first, ties by name. */
  evacuators: EvacuatorRef[];
  /** One line per annotation that looks like a registration but is not one (never thrown: a pod's annotations are not ours to refuse). */
  invalid: string[];
}

/** The evacuators a pod registers with `evacuator.slipway.dev/<name>: "<priority>"` annotations (spec §5). */
export function evacuatorsOf(annotations: Record<string, string> | undefined): EvacuatorsOf {
  const evacuators: EvacuatorRef[] = [];
  const invalid: string[] = [];
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!key.startsWith(EVACUATOR_ANNOTATION_PREFIX)) continue;
    const name = key.slice(EVACUATOR_ANNOTATION_PREFIX.length);
    if (!EVACUATOR_NAME_RE.test(name)) {
      invalid.push(`${key}: "${name}" is not an evacuator name (1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit)`);
    } else if (!PRIORITY_RE.test(value) || Number(value) > MAX_EVACUATOR_PRIORITY) {
      invalid.push(`${key}: priority "${value}" is not an integer from ${MIN_EVACUATOR_PRIORITY} to ${MAX_EVACUATOR_PRIORITY}`);
    } else {
      evacuators.push({ name, priority: Number(value) });
    }
  }
  evacuators.sort(byPriority);
  invalid.sort();
  return { evacuators, invalid };
}

/** Highest priority first; ties by name (NM-5.2, spec §5 "ties go by name"). */
export function byPriority(a: EvacuatorRef, b: EvacuatorRef): number {
  return b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

// ---- cancellation (NM-5.6, NM-5.7, spec §8.7) ----------------------------------------------------------

export type Withdrawal = { action: 'delete' } | { action: 'update'; requesters: Requester[] } | { action: 'leave' };

/**
 * What requester `me` does to an Evacuation when it no longer needs the pod to leave: it leaves
 * `requesters`, and the last one out deletes the object unless the policy is Forbid (then the pod
 * keeps leaving). An object nobody requests any more under Allow is deleted too, whoever notices.
 * Pure: the activity applies it to a fresh read, with preconditions, so concurrent requesters agree.
 */
export function withdraw(requesters: readonly Requester[], me: string, policy: CancellationPolicy | undefined): Withdrawal {
  const others = requesters.filter((r) => r.name !== me);
  const forbid = policy === 'Forbid';
  if (others.length === 0 && !forbid) return { action: 'delete' };
  if (others.length === requesters.length) return { action: 'leave' };
  return { action: 'update', requesters: others };
}
