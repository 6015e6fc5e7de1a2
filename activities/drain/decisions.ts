// Whether the operator still lets the drain evict (or delete) a pod, asked of the drain itself right
// before each request. Cancelling the running activity is no guarantee: a cancel reaches it only
// with its next heartbeat response (up to the heartbeat throttle, 8 s, later), and an eviction batch
// is not cancelled at all. A query is answered after every signal already in the drain's history
// (Temporal's queries are consistent), so a skipPod or forceDeletePod recorded before the check
// stops the request. Cost: one query to Temporal per request, none to the apiserver; checks that
// start while a query is out share the next one. No answer: the request is not sent (it is retried
// like a refusal), never sent blind.
import { Context } from '@temporalio/activity';
import { DRAIN_DECISIONS_QUERY, podKey, type OperatorDecision, type PodRef } from '../../shared/drain.js';

/** What the request is: an eviction or deletion by the drain, or the operator's own force-delete. */
export type Purpose = 'drain' | 'forceDelete';
/** go: send it. Otherwise why not; `unknown` when the drain did not answer. */
export type Verdict = { go: true } | { go: false; why: string; unknown?: boolean };
export type DecisionCheck = (p: PodRef, purpose: Purpose) => Promise<Verdict>;

const QUERY_TIMEOUT_MS = 5_000;
/** The workflow type whose activities ask (the drain's activities serve no other workflow). */
const DRAIN_WORKFLOW_TYPE = 'drainWorkflow';

/** The verdict on a pod, given the drain's decisions. */
export function verdict(decisions: Record<string, OperatorDecision>, p: PodRef, purpose: Purpose): Verdict {
  const d = decisions[podKey(p)];
  if (!d || (purpose === 'forceDelete' && d === 'ForceDelete')) return { go: true };
  return { go: false, why: d === 'Skip' ? 'not sent: the operator skipped the pod' : 'not sent: the operator force-deletes the pod' };
}

/**
 * The check for the current activity's drain (its latest run: a continue-as-new carries the
 * decisions). Undefined outside a drain's activity (nobody to ask).
 */
export function decisionCheck(): DecisionCheck | undefined {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return undefined;
  }
  const wf = ctx.info.workflowExecution;
  if (ctx.info.workflowType !== DRAIN_WORKFLOW_TYPE || !wf) return undefined;
  const client = ctx.client;
  const fresh = coalesced(() =>
    client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflow.getHandle(wf.workflowId).query<Record<string, OperatorDecision>>(DRAIN_DECISIONS_QUERY)),
  );
  return async (p, purpose) => {
    try {
      return verdict(await fresh(), p, purpose);
    } catch (err) {
      return { go: false, unknown: true, why: `not sent: the drain's operator decisions could not be read: ${(err as Error).message}` };
    }
  };
}

/** Each caller gets the answer of a call started after it asked; callers waiting together share one. */
export function coalesced<T>(call: () => Promise<T>): () => Promise<T> {
  let running: Promise<void> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const p = call();
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    running = settled;
    void settled.then(() => {
      if (running === settled) running = undefined;
    });
    return p;
  };
  return () => {
    if (!running) return start();
    next ??= running.then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}
