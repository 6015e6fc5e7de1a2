// The drain's data: what the classify activity reports about each pod, and what the wave planner
// and the workflow reason about. Plain data only (it crosses the activity boundary), so it lives
// below both: activities/ and workflows/ import it, never each other's.

/** What the drain does with a pod. */
export type PodAction = 'Evict' | 'Delete' | 'WaitCompleted' | 'Skip';
/** KEP-4212 pod type. */
export type PodType = 'Default' | 'DaemonSet' | 'Static';

export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface PodVerdict extends PodRef {
  action: PodAction;
  /** Wave: pods of a lower order leave the node before the next order starts. */
  order: number;
  podType: PodType;
  /** Why this action (rule name, label, filter). */
  reason: string;
  warnings: string[];
  /** deletionTimestamp is set: never evicted again, only waited for. */
  terminating: boolean;
  phase: string;
  /** ns/claim of the PersistentVolumeClaims it mounts (for the volume-detach wait). */
  claims: string[];
  /** `Kind namespace/name` of its controller: pods that come back after eviction are counted per controller. */
  controller?: string;
  /** It tolerates the cordon's taint (node.kubernetes.io/unschedulable), so the scheduler may put its replacement back here. */
  toleratesUnschedulable?: boolean;
  /**
   * Targets mode only (a NodeMaintenance drain): whether the pod matches a drain-target lane. An
   * untargeted pod is left alone (not evicted, not waited for, not blocking); absent outside targets mode.
   */
  targeted?: boolean;
  /** Targets mode: a targeted DaemonSet or static pod, never evicted, left for node shutdown (action Skip, counted as podsKept). */
  kept?: boolean;
  /** Targets mode, untargeted pods only: spec.priority (0 when absent). */
  priority?: number;
  /** Components it provides (slipway.dev/provides): it stays while any lock on one of them exists (NM-5.9). */
  provides?: string[];
  /** Components it requires (slipway.dev/requires): an implicit lock on each until it has left (NM-5.9). */
  requires?: string[];
  /** Its valid evacuators (evacuator.slipway.dev/<name>), highest priority first: it gets an Evacuation, not an eviction (NM-5.1). */
  evacuators?: string[];
}

export interface NodeFacts {
  name: string;
  exists: boolean;
  /** Ready condition is Unknown: the kubelet is gone. */
  unreachable: boolean;
  cordoned: boolean;
  /** Explicit dependency locks from the node's annotations: component → holders (NM-5.9); absent when none. */
  locks?: Record<string, string[]>;
  /** Owners of the pre-drain lifecycle hooks on the node (api/lifecycle-hooks.ts), sorted; absent when none. */
  preDrainHooks?: string[];
  /** "ns/name" of the CycleNodeRequest whose claim (slipway.dev/cycled-by) the node carries (NM-7.7); absent when none. */
  claimedBy?: string;
}

/** Drain options with defaults applied and durations in milliseconds. */
export interface DrainSettings {
  podEvictionTimeoutMs?: number;
  podEvictionTimeoutPolicy: 'Wait' | 'Fail' | 'Delete';
  volumeDetachTimeoutMs?: number;
  evictionConcurrency: number;
  evictionQPS: number;
  /** How long an evacuator may go without progress before the next takes over (NM-5.2); used when creating an Evacuation. */
  evacuationProgressDeadlineSeconds?: number;
}

export interface DrainSnapshot {
  node: NodeFacts;
  pods: PodVerdict[];
  /** Invalid drain options: the drain fails before it touches anything. */
  errors: string[];
  /**
   * Invalid DrainRules that could decide about this node's pods (each message names the rule and the
   * field). While any is listed the drain holds: it evicts nothing until the rule is fixed or deleted.
   * Invalid rules that cannot match this node or its pods are left out and do not hold it.
   */
  heldBy: string[];
  settings?: DrainSettings;
  /**
   * Fingerprint of the DrainRules this snapshot was judged by. The waits that end on a rule change
   * start from it, so a change between this read and the wait is not missed.
   */
  drainRulesSeen?: string;
}

/** On an unreachable node, a pod terminating for longer than this is no longer waited on (classify skips it; the wave wait looks again by then). */
export const UNREACHABLE_TERMINATING_SKIP_MS = 5_000;

export const podKey = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

/**
 * The drain's query of the operator decisions it has accepted (workflows/messages.ts), by name here
 * because the activities that ask it (activities/drain/decisions.ts) may not import workflow code.
 */
export const DRAIN_DECISIONS_QUERY = 'drainDecisions';
/** 'Skip': never evict or delete the pod. 'ForceDelete': a forceDeletePod not yet carried out (no eviction either). */
export type OperatorDecision = 'Skip' | 'ForceDelete';

/** Sorted by namespace/name, so messages and tests are deterministic. */
export function byKey<T extends { namespace: string; name: string }>(a: T, b: T): number {
  const ka = podKey(a);
  const kb = podKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** `a, b, c, ... (N more)`: a list for a one-line message, cut after `max`. */
export function truncate(list: string[], max = 3): string {
  return list.length <= max ? list.join(', ') : `${list.slice(0, max).join(', ')}, ... (${list.length - max} more)`;
}
