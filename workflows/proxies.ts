// How the workflows call activities: one retry policy and two kinds of call, so every workflow
// treats failures alike. Transient API and cloud errors are retried without limit (visible as a
// retrying activity in the Web UI); permanent ones are reported by the activities as results.
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

export const RETRY: ActivityOptions['retry'] = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };

/**
 * How soon a dead worker's step is retried elsewhere. The worker heartbeats for every running
 * activity (worker/liveness.ts), so this holds for short steps too, not only for those that
 * heartbeat on their own. Only an activity option: the commands, and so replay, are unchanged.
 */
export const HEARTBEAT_TIMEOUT = '10 seconds';

/** Short steps: bounded at 30 s; a dead worker's step is retried elsewhere within the heartbeat timeout. */
export const steps = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', heartbeatTimeout: HEARTBEAT_TIMEOUT, retry: RETRY });

/** Long steps (waits, evictions): a dead worker's step is retried elsewhere within the heartbeat timeout. */
export function longSteps(startToCloseTimeout: ActivityOptions['startToCloseTimeout'], more: Partial<ActivityOptions> = {}) {
  return proxyActivities<Activities>({ startToCloseTimeout, heartbeatTimeout: HEARTBEAT_TIMEOUT, retry: RETRY, ...more });
}
