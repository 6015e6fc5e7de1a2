// The next step for one due pod that has evacuators (NM-5.1–5.5): create its Evacuation, make an
// evacuator active, hand control to the next one, fall back to eviction, wait, or stop because the
// pod has left. Pure and deterministic (the time is an argument), so the drain workflow can call it
// on every pass and a test can walk every branch; progressEvacuations (activities/drain/evacuation.ts)
// carry the step out.
import { byPriority, type EvacuationSpec, type EvacuationStatus, type EvacuatorRef } from '../api/evacuation.js';

export { withdraw, type Withdrawal } from '../api/evacuation.js';

/** The parts of an Evacuation the decision reads (status as stored: any field may be missing). */
export interface EvacuationView {
  spec: Pick<EvacuationSpec, 'evacuators' | 'progressDeadlineSeconds'>;
  status?: Partial<Pick<EvacuationStatus, 'activeEvacuator' | 'evacuators'>>;
}

/** The pod as the drain last saw it. */
export interface PodPresence {
  exists: boolean;
  phase?: string;
}

export type HandOverReason = 'completed' | 'deadline';

export type EvacuationStep =
  /** NM-5.5: the pod is gone or in a terminal phase; nothing more to do (garbage collection removes the Evacuation). */
  | { kind: 'done'; why: 'gone' | 'terminal' }
  /** NM-5.1: no Evacuation yet. */
  | { kind: 'create' }
  /** NM-5.2: the first evacuator, highest priority, takes control. */
  | { kind: 'activate'; name: string }
  /** NM-5.2: the active evacuator finished or went quiet; the next one takes control (an Event records it). */
  | { kind: 'handOver'; from: string; to: string; reason: HandOverReason }
  /** NM-5.3: no evacuator left: activeEvacuator "" with EvictionFallback=True, then evict. `from` when this step ends an active one. */
  | { kind: 'fallback'; from?: string; reason?: HandOverReason }
  /** NM-5.4: an evacuator is active and within its deadline: neither evict nor delete; look again at `until` (ms) at the latest. */
  | { kind: 'wait'; name: string; until: number; message: string };

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

/** Milliseconds of an RFC 3339 time, or undefined when absent or unreadable (an evacuator wrote it). */
const timeMs = (t: string | undefined): number | undefined => {
  const ms = t === undefined ? NaN : Date.parse(t);
  return Number.isFinite(ms) ? ms : undefined;
};

/** The one step to take now for a due pod with evacuators. */
export function nextEvacuationStep(evacuation: EvacuationView | undefined, pod: PodPresence, nowMs: number): EvacuationStep {
  if (!pod.exists) return { kind: 'done', why: 'gone' };
  if (pod.phase !== undefined && TERMINAL_PHASES.has(pod.phase)) return { kind: 'done', why: 'terminal' };
  if (!evacuation) return { kind: 'create' };

  // The stored order is already this one; sorting again keeps a hand-edited list from changing who goes next.
  const order = [...evacuation.spec.evacuators].sort(byPriority);
  const progress = new Map((evacuation.status?.evacuators ?? []).map((e) => [e.name, e]));
  const completed = (e: EvacuatorRef) => progress.get(e.name)?.completed === true;
  // An evacuator that withdrew before its turn (completed) is skipped.
  const firstFrom = (i: number) => order.slice(i).find((e) => !completed(e));

  const active = evacuation.status?.activeEvacuator;
  if (active === '') return { kind: 'fallback' }; // decided earlier; the caller keeps evicting
  const at = active === undefined ? -1 : order.findIndex((e) => e.name === active);
  if (at < 0) {
    // Nobody active yet (or a name that is not registered): start from the top.
    const first = firstFrom(0);
    return first ? { kind: 'activate', name: first.name } : { kind: 'fallback' };
  }

  const name = order[at]!.name;
  const mine = progress.get(name);
  const activated = timeMs(mine?.activatedTime);
  // Active without an activation time: the write that records it did not land; record it again.
  if (activated === undefined) return { kind: 'activate', name };

  const handOver = (reason: HandOverReason): EvacuationStep => {
    const next = firstFrom(at + 1);
    return next ? { kind: 'handOver', from: name, to: next.name, reason } : { kind: 'fallback', from: name, reason };
  };
  if (mine?.completed === true) return handOver('completed');
  // NM-5.2: progress is the later of activation and the last heartbeat; at the deadline exactly, it has run out.
  const heartbeat = timeMs(mine?.heartbeatTime);
  const until = Math.max(activated, heartbeat ?? activated) + evacuation.spec.progressDeadlineSeconds * 1000;
  if (nowMs >= until) return handOver('deadline');
  return { kind: 'wait', name, until, message: evacuatingMessage(name, mine?.message) };
}

/** NM-5.4: how the maintenance reports a pod an evacuator is moving ("evacuating by db-operator.test: copying"). */
export function evacuatingMessage(name: string, message: string | undefined): string {
  return message ? `evacuating by ${name}: ${message}` : `evacuating by ${name}`;
}
