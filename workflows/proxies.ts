// How the workflows call activities: one retry policy and two kinds of call, so every workflow
// treats failures alike. Transient API and cloud errors are retried without limit (visible as a
// retrying activity in the Web UI); permanent ones are reported by the activities as results.
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

export const RETRY: ActivityOptions['retry'] = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };

/** Short steps: a dead worker's step is retried elsewhere within 30 s. */
export const steps = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });

/** Long, heartbeating steps (waits, evictions): a dead worker's step is retried elsewhere within 15 s. */
export function longSteps(startToCloseTimeout: ActivityOptions['startToCloseTimeout'], more: Partial<ActivityOptions> = {}) {
  return proxyActivities<Activities>({ startToCloseTimeout, heartbeatTimeout: '15 seconds', retry: RETRY, ...more });
}
