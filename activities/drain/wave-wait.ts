// Waiting for a wave: until the pods it evicted have left the node, a WaitCompleted pod finishes,
// a new pod arrives, or a refused eviction goes through. Refused evictions (a PDB's 429) are retried
// here, at once, then 1 s doubling to 10 s, and at once whenever a pod leaves (a budget may then
// allow the next), so a drain blocked for hours is one pending activity in the Web UI, named by its
// summary, with the refusal in its heartbeat details, not a history that grows with every retry.
// Watch-based (the worker's node and pod caches, else its own watches); heartbeats every second,
// so a signal's cancel reaches it within the worker's heartbeat throttle. Cancelled, it sends no
// further eviction and returns what it did (the workflow waits for that answer), so an eviction
// that raced a skipPod is counted, not lost.
import { Context, heartbeat } from '@temporalio/activity';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { DrainSnapshot, PodRef } from '../../shared/drain.js';
import type { Kube } from '../../kube/client.js';
import { watchUntil } from '../../kube/watch.js';
import { currentOf, evictPresent, isLeaving, type EvictResult } from './evict.js';
import { decisionCheck } from './decisions.js';
import { listNodePods, nodePods } from './pods.js';
import { nodeByName, oneNode } from '../node-cache.js';
import { untilDrainRulesChange } from './rules-wait.js';
import { untilEvacuationChange, type EvacuationWaitInput } from './evacuation-wait.js';
import { isUnreachable } from './node.js';
import { nodeLocks } from '../../api/dependency-locks.js';
import { failpoint } from '../../shared/failpoint.js';
import { nodeClassifier, nodeFacts, type ClassifyInput } from './snapshot.js';

export interface WaveWaitInput {
  nodeName: string;
  /** uids that are leaving (evicted, deleted, terminating). */
  leaving: string[];
  /** uids of WaitCompleted pods (and of pods holding a dependency lock): the wait ends as soon as one has finished or left. */
  completion: string[];
  /** Pods whose eviction was refused: retried here until one goes through. */
  refused: PodRef[];
  /**
   * uid → why the workflow shows each refused pod refused: another answer, once the wait has run
   * REASON_REFRESH_MS, ends it ('Reason'), so status follows a PDB's words without a renewal per minute.
   */
  reasons?: Record<string, string>;
  /** Every uid on the node when the workflow last looked: a pod not among them ends the wait. */
  known: string[];
  /** The DrainRules the workflow judged by (DrainSnapshot.drainRulesSeen): a change since then ends the wait. */
  drainRulesSeen?: string;
  /** The node's dependency locks the workflow judged by, while a provider is held: a change ends the wait (NM-5.9). */
  nodeLocks?: Record<string, string[]>;
  /** Pods in an evacuator's hands (NM-5.4): an Evacuation that calls for another step (a withdrawal, a hand-over) ends the wait. */
  evacuations?: EvacuationWaitInput['evacuations'];
  /** Whether the workflow judged the node unreachable: its kubelet dying during the wait ends it (NodeChanged). */
  nodeUnreachable?: boolean;
  /**
   * A maintenance's drain: the CycleNodeRequest claim the workflow judged by (null: none). A claim that
   * differs ends the wait (NodeChanged), so no look taken before a claim is acted on (NM-7.7).
   */
  nodeClaimedBy?: string | null;
  gracePeriodSeconds?: number;
  concurrency: number;
  qps: number;
  timeoutMs: number;
  /**
   * Classify the node's pods when the wait ends (not when cancelled), from what the wait watched:
   * the drain's next pass needs that look, and one activity saves a round trip and three reads.
   */
  classify?: ClassifyInput;
  /** Epoch ms the window ends at, whichever attempt runs it: a retry after a worker crash does not start a whole window again. */
  endsAt?: number;
}

/**
 * Why the wait ended: the workflow looks again in every case. Besides the pods, the node (an
 * uncordon, a deletion, its kubelet gone) and the DrainRules (one that turned invalid must hold the drain before the
 * next retry) end it, so a long wait never hides a change the drain must act on.
 */
export type WaveWaitEnd = 'Left' | 'Completed' | 'Evicted' | 'Arrived' | 'Refresh' | 'Reason' | 'NodeChanged' | 'RulesChanged' | 'EvacuationChanged' | 'Timeout' | 'Cancelled';

export interface WaveWaitResult {
  end: WaveWaitEnd;
  /** Leaving uids still on the node. */
  remaining: string[];
  /** Refused pods whose eviction went through here. */
  evicted: EvictResult[];
  /** The latest answer for each pod still refused. */
  refusals: EvictResult[];
  /** uid → how many times its eviction was refused during this wait (an Evacuation's failedEvictions, NM-5.3). */
  refusedTimes?: Record<string, number>;
  /** The look asked for by `classify`. */
  snapshot?: DrainSnapshot;
}

/** A long wait shows pods that have left only for so long: then the workflow refreshes its status. */
export const WAVE_REFRESH_MS = 10_000;
/** A refusal's new words end the wait only after this long (a refusal whose words change often costs a renewal a minute at most). */
export const REASON_REFRESH_MS = 60_000;

const isFinished = (p: V1Pod | undefined) => p?.status?.phase === 'Succeeded' || p?.status?.phase === 'Failed';
/** Retry delay after the n-th refused eviction: 1 s doubling to 10 s. */
export function evictionBackoffMs(attempts: number): number {
  return Math.min(10_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

/** How long the look at the end of a wait may take before the wait answers without it. */
const LOOK_TIMEOUT_MS = 5_000;

/**
 * The look at the end of a wait, best effort: a failed, slow or cancelled read never costs the
 * wait's answer (the evictions it made must be counted), nor holds it back; the drain then classifies.
 */
async function lookAfterWait(look: () => Promise<{ snapshot: DrainSnapshot }>, cancelled: AbortSignal): Promise<DrainSnapshot | undefined> {
  if (cancelled.aborted) return undefined;
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const giveUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LOOK_TIMEOUT_MS);
    onAbort = () => resolve(undefined);
    cancelled.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([look().then((r) => r.snapshot, () => undefined), giveUp]);
  } finally {
    clearTimeout(timer);
    cancelled.removeEventListener('abort', onAbort);
  }
}

export function createWaveWaitActivities(kube: Kube) {
  const classify = nodeClassifier(kube);
  return {
    async waitForWave(input: WaveWaitInput): Promise<WaveWaitResult> {
      const ctx = Context.current();
      const check = decisionCheck();
      const started = Date.now();
      const windowMs = input.endsAt === undefined ? input.timeoutMs : Math.max(0, Math.min(input.timeoutMs, input.endsAt - started));
      const known = new Set([...input.known, ...input.leaving]);
      const leaving = new Set(input.leaving);
      const refused = new Map(input.refused.map((p) => [p.uid, p]));
      const refusals = new Map<string, EvictResult>();
      const refusedTimes: Record<string, number> = {};
      const said = (r: EvictResult) => r.reason ?? r.outcome;
      const reasonChanged = () =>
        input.reasons !== undefined && Date.now() - started >= REASON_REFRESH_MS && [...refusals.values()].some((r) => input.reasons![r.uid] !== undefined && input.reasons![r.uid] !== said(r));
      const evicted: EvictResult[] = [];
      let pods = new Map<string, V1Pod>();
      let podsListed = false;
      let nodeSeen: V1Node | undefined;
      let lastRemaining = leaving.size;
      let end: WaveWaitEnd | undefined;
      const remaining = () => [...leaving].filter((u) => pods.has(u));
      const details = () => ({ remaining: remaining().length, refused: [...refusals.values()].map((r) => `${r.namespace}/${r.name}: ${r.reason ?? r.outcome}`) });

      // Refused evictions, retried until one goes through; `kick` retries at once.
      const stop = new AbortController();
      let kicked = false;
      let wake = () => {};
      const kick = () => {
        kicked = true;
        wake();
      };
      let listed = () => {};
      const firstList = new Promise<void>((resolve) => (listed = resolve));
      const retrying = (async () => {
        await Promise.race([firstList, new Promise((r) => stop.signal.addEventListener('abort', r, { once: true }))]);
        for (let attempt = 1; refused.size && !stop.signal.aborted; attempt++) {
          const current = currentOf(pods.values());
          const results = await evictPresent(kube, [...refused.values()], current, { ...input, signal: stop.signal, check });
          for (const r of results) {
            if (r.outcome === 'NotTried') continue;
            if (r.outcome === 'Withdrawn') {
              refused.delete(r.uid); // the operator's decision: never asked again (the drain applies it)
              refusals.delete(r.uid);
              continue;
            }
            if (isLeaving(r)) {
              refused.delete(r.uid);
              refusals.delete(r.uid);
              evicted.push(r);
            } else {
              refusals.set(r.uid, r);
              refusedTimes[r.uid] = (refusedTimes[r.uid] ?? 0) + 1;
            }
          }
          heartbeat(details());
          if (evicted.length) return 'Evicted' as const;
          if (reasonChanged()) return 'Reason' as const;
          if (!kicked) {
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, evictionBackoffMs(attempt));
              wake = () => {
                clearTimeout(t);
                resolve();
              };
              stop.signal.addEventListener('abort', () => wake(), { once: true });
            });
          }
          if (kicked) attempt = 0; // the loop's ++ makes it 1: back to the shortest backoff
          kicked = false;
        }
        return undefined;
      })();

      const evaluate = (): WaveWaitEnd | undefined => {
        if (input.completion.some((u) => !pods.has(u) || isFinished(pods.get(u)))) return 'Completed';
        if ([...pods.keys()].some((u) => !known.has(u))) return 'Arrived';
        const left = remaining().length;
        if (left < lastRemaining) kick(); // a pod left: a budget may allow the next eviction now
        const changed = left !== lastRemaining;
        lastRemaining = left;
        if (leaving.size && left === 0) return 'Left';
        if (changed && Date.now() - started >= WAVE_REFRESH_MS) return 'Refresh';
        return undefined;
      };
      const watchAbort = new AbortController();
      let cancelled = false;
      const onCancel = () => {
        cancelled = true;
        stop.abort();
        watchAbort.abort(ctx.cancellationSignal.reason);
      };
      const beat = setInterval(() => heartbeat(details()), 1000);
      ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
      if (ctx.cancellationSignal.aborted) onCancel();
      const watching = watchUntil<V1Pod>({
        kc: kube.config,
        path: '/api/v1/pods',
        fieldSelector: `spec.nodeName=${input.nodeName}`,
        list: () => listNodePods(kube, input.nodeName),
        cached: nodePods(kube, input.nodeName),
        done: (objects) => {
          pods = objects;
          podsListed = true;
          listed(); // the retries judge 'still on the node' by what the watch sees, never by an empty map
          end ??= evaluate();
          if (end === undefined && remaining().length) failpoint('worker.drain.wave-wait');
          return end !== undefined;
        },
        timeoutMs: windowMs,
        onTick: () => heartbeat(details()),
        signal: watchAbort.signal,
      });
      const nodeChanged = watchUntil<V1Node>({
        ...nodeByName(kube, input.nodeName),
        cached: oneNode(kube, input.nodeName),
        done: (nodes) => {
          const node = [...nodes.values()][0];
          nodeSeen = node;
          if (node?.spec?.unschedulable !== true) return true; // uncordoned or deleted
          // The kubelet went away: its pods can never finish leaving, and the drain must stop waiting on them.
          if (input.nodeUnreachable === false && isUnreachable(node)) return true;
          if (input.nodeClaimedBy !== undefined && nodeFacts(input.nodeName, node).claimedBy !== (input.nodeClaimedBy ?? undefined)) return true;
          return input.nodeLocks !== undefined && JSON.stringify(nodeLocks(node.metadata?.annotations)) !== JSON.stringify(input.nodeLocks);
        },
        timeoutMs: windowMs,
        signal: watchAbort.signal,
      });
      const rulesChanged = untilDrainRulesChange(kube, { timeoutMs: windowMs, since: input.drainRulesSeen, signal: watchAbort.signal });
      const never = new Promise<never>(() => {});
      const evacuationWatch = input.evacuations?.length ? untilEvacuationChange(kube, { evacuations: input.evacuations, timeoutMs: windowMs, signal: watchAbort.signal }) : undefined;
      const evacuationChanged = evacuationWatch ?? never;
      try {
        const first = await Promise.race([
          watching.then((w) => (w.met ? end! : ('Timeout' as const))),
          retrying.then((r) => r ?? never),
          nodeChanged.then((w) => (w.met ? ('NodeChanged' as const) : never)),
          rulesChanged.then((w) => (w.met ? ('RulesChanged' as const) : never)),
          evacuationChanged.then((w) => (w.met ? ('EvacuationChanged' as const) : never)),
        ]);
        end = first;
      } catch (err) {
        if (!cancelled) throw err;
        end = 'Cancelled';
      } finally {
        clearInterval(beat);
        stop.abort();
        watchAbort.abort(new Error('wave wait ended'));
        ctx.cancellationSignal.removeEventListener('abort', onCancel);
        // Not `never`: a wait without Evacuations has no watch of them to settle.
        await Promise.allSettled([watching, retrying, nodeChanged, rulesChanged, ...(evacuationWatch ? [evacuationWatch] : [])]);
      }
      if (end === 'Left') failpoint('worker.drain.between-waves');
      const result: WaveWaitResult = { end, remaining: remaining(), evicted, refusals: [...refusals.values()], refusedTimes };
      if (input.classify && end !== 'Cancelled') {
        // The watched pods are used only when the pod stream itself ended the wait (so it was live
        // just now) and no eviction was made here (its pod's update may not have arrived yet);
        // otherwise they are listed. A node not seen is read.
        const streamLive = end === 'Left' || end === 'Arrived' || end === 'Completed' || end === 'Refresh';
        const seen = { node: nodeSeen, ...(streamLive && podsListed && !evicted.length ? { pods: [...pods.values()] } : {}) };
        const snapshot = await lookAfterWait(() => classify(input.classify!, seen), ctx.cancellationSignal);
        if (snapshot) result.snapshot = snapshot;
      }
      return result;
    },
  };
}
