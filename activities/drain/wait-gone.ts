// Waits until the given pods have left the node (deleted, or replaced by a different uid), or until
// a WaitCompleted pod finishes (the workflow then deletes it), or until the deadline. Watch-based;
// heartbeats while it waits, and stops when the workflow cancels it (a signal arrived).
import { Context, heartbeat } from '@temporalio/activity';
import type { V1Pod } from '@kubernetes/client-node';
import type { Kube } from '../kube.js';
import { watchUntil } from '../watch.js';
import { listNodePods } from './pods.js';

export interface WaitGoneInput {
  nodeName: string;
  /** uids that must leave the node. */
  uids: string[];
  /** uids of WaitCompleted pods: return as soon as one of them has finished. */
  completionUids: string[];
  timeoutMs: number;
}

export interface WaitGoneResult {
  remaining: string[];
  finished: string[];
}

const isFinished = (p: V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export function createWaitGoneActivities(kube: Kube) {
  return {
    async waitForPodsGone(input: WaitGoneInput): Promise<WaitGoneResult> {
      const wanted = new Set([...input.uids, ...input.completionUids]);
      const completion = new Set(input.completionUids);
      const evaluate = (pods: Map<string, V1Pod>): WaitGoneResult => ({
        remaining: [...wanted].filter((u) => pods.has(u)),
        finished: [...completion].filter((u) => pods.get(u) && isFinished(pods.get(u)!)),
      });
      const ctx = Context.current();
      const { objects } = await watchUntil<V1Pod>({
        kc: kube.config,
        path: '/api/v1/pods',
        fieldSelector: `spec.nodeName=${input.nodeName}`,
        list: () => listNodePods(kube, input.nodeName),
        done: (pods) => {
          const r = evaluate(pods);
          return r.remaining.length === 0 || r.finished.length > 0;
        },
        timeoutMs: input.timeoutMs,
        onTick: (pods) => heartbeat({ remaining: evaluate(pods).remaining.length }),
        signal: ctx.cancellationSignal,
      });
      return evaluate(objects);
    },
  };
}
