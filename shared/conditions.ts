// metav1.Condition lists, as every Slipway status keeps them: the bridge's mirrors and the drift
// observer's own writes share this one implementation.
import type { Condition } from '../api/cycle-node-request.js';

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export const metaTime = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

export interface ConditionInput {
  type: string;
  status: Condition['status'];
  reason: string;
  message: string;
  observedGeneration?: number;
}

/**
 * The condition list with `next` set: lastTransitionTime is the previous one when the status did not
 * change (reason and message may), `now` otherwise. Other conditions are kept.
 */
export function setCondition(prev: Condition[] | undefined, next: ConditionInput, now: Date): Condition[] {
  const list = [...(prev ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const old = i >= 0 ? list[i] : undefined;
  const cond: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : metaTime(now),
    ...(next.observedGeneration !== undefined ? { observedGeneration: next.observedGeneration } : {}),
  };
  if (i >= 0) list[i] = cond;
  else list.push(cond);
  return list;
}
