// How the workflows call activities: one retry policy and two kinds of call, so every workflow
// treats failures alike. Transient API and cloud errors are retried without limit (visible as a
// retrying activity in the Web UI); permanent ones are reported by the activities as results.
import { ActivityCancellationType, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

export const RETRY: ActivityOptions['retry'] = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };

/**
 * How soon a dead worker's step is retried elsewhere. The worker heartbeats for every running
 * activity (worker/liveness.ts), so this holds for short steps too, not only for those that
 * heartbeat on their own. Only an activity option: the commands, and so replay, are unchanged.
 */
export const HEARTBEAT_TIMEOUT = '10 seconds';

/**
 * The watches' heartbeat timeout: the worker heartbeats for an activity every third of its timeout,
 * so a watch that may run for weeks (one per held node) costs the server a heartbeat every 20 s, not
 * every 2 s. A dead worker's watch is retried within a minute: nothing waits on it meanwhile.
 */
export const WATCH_HEARTBEAT_TIMEOUT = '60 seconds';

/** The longest a watch waits without a change before it answers anyway and is renewed in place. */
export const WATCH_WINDOW_MS = 20 * 60_000;

/** Short steps: bounded at 30 s; a dead worker's step is retried elsewhere within the heartbeat timeout. */
export const steps = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', heartbeatTimeout: HEARTBEAT_TIMEOUT, retry: RETRY });

/** Long steps (waits, evictions): a dead worker's step is retried elsewhere within the heartbeat timeout. */
export function longSteps(startToCloseTimeout: ActivityOptions['startToCloseTimeout'], more: Partial<ActivityOptions> = {}) {
  return proxyActivities<Activities>({ startToCloseTimeout, heartbeatTimeout: HEARTBEAT_TIMEOUT, retry: RETRY, ...more });
}

/**
 * Watches: long activities that touch nothing and answer on a change (a node, the selection, a budget
 * slot, a held node, Evacuations). Their cancel (a watch re-armed, a signal) is not waited for
 * (TRY_CANCEL): with a heartbeat every 20 s it may take that long to reach the activity, whose
 * late answer is then dropped.
 */
export function watchSteps(startToCloseTimeout: ActivityOptions['startToCloseTimeout']) {
  return proxyActivities<Activities>({ startToCloseTimeout, heartbeatTimeout: WATCH_HEARTBEAT_TIMEOUT, retry: RETRY, cancellationType: ActivityCancellationType.TRY_CANCEL });
}
