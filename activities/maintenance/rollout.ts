// A rolling maintenance's reads of a node (docs/rolling-maintenance.md RM-3): its bootID before
// the work (read fresh, then kept in workflow state), and the completion watch: one long activity
// per AwaitingWork node, on the worker's node cache, that returns only when the work is seen done
// (a new bootID and Ready, the done annotation naming the maintenance) or the node is gone, and
// at its renewal. Heartbeats add no history, so waiting for a reboot costs nothing.
import { Context } from '@temporalio/activity';
import type { V1Node } from '@kubernetes/client-node';
import { ROLLOUT_DONE_ANNOTATION } from '../../api/rollout.js';
import type { Kube } from '../../kube/client.js';
import { failpoint } from '../../shared/failpoint.js';
import { watchUntil } from '../../kube/watch.js';
import { freshNode, nodeByName, oneNode } from '../node-cache.js';
import { RENEW_MS } from './watch.js';

export interface RolloutNodeFacts {
  exists: boolean;
  bootID?: string;
  uid?: string;
  internalIP?: string;
  ready: boolean;
}

export interface RolloutWatchInput {
  node: string;
  /** The maintenance's name: the done annotation must name it. */
  maintenance: string;
  /** The bootID recorded before the work (completion by reboot compares against it). */
  bootID?: string;
  /** The Node's uid recorded with it: another uid is a node re-created under the name, not a reboot. */
  uid?: string;
  reboot: boolean;
  annotation: boolean;
  /** Test hook: the renewal period. */
  renewMs?: number;
}

export interface RolloutWatchResult {
  /** How the work was seen done; undefined at the renewal. */
  done?: 'reboot' | 'annotation' | 'gone' | 'replaced';
  bootID?: string;
}

const isReady = (n: V1Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export function nodeFacts(n: V1Node | undefined): RolloutNodeFacts {
  if (!n) return { exists: false, ready: false };
  const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  return { exists: true, ready: isReady(n), ...(n.status?.nodeInfo?.bootID ? { bootID: n.status.nodeInfo.bootID } : {}), ...(n.metadata?.uid ? { uid: n.metadata.uid } : {}), ...(ip ? { internalIP: ip } : {}) };
}

/** Whether the node's work is done by the methods asked for (pure: the watch and its tests share it). */
export function workDone(n: V1Node | undefined, w: Omit<RolloutWatchInput, 'renewMs'>): RolloutWatchResult['done'] {
  if (!n) return 'gone';
  // RM-3.2: a Node re-created under the name has its own bootID; the node drained is gone.
  if (w.uid && n.metadata?.uid && n.metadata.uid !== w.uid) return 'replaced';
  const boot = n.status?.nodeInfo?.bootID;
  // An empty bootID (a kubelet that has not reported yet) is no reboot; nor is a node that is not Ready yet.
  if (w.reboot && w.bootID && boot && boot !== w.bootID && isReady(n)) return 'reboot';
  if (w.annotation && n.metadata?.annotations?.[ROLLOUT_DONE_ANNOTATION] === w.maintenance) return 'annotation';
  return undefined;
}

export function createRolloutActivities(kube: Kube) {
  return {
    /** The node as the apiserver has it now (a GET, not the cache: the recorded bootID must not be a stale one). */
    async readRolloutNode(input: { node: string }): Promise<RolloutNodeFacts> {
      const facts = nodeFacts(await freshNode(kube, input.node));
      failpoint('worker.rollout.after-boot-read');
      return facts;
    },

    /** Returns when the node's work is seen done or the node is gone, or after the renewal period. */
    async watchRolloutNode(input: RolloutWatchInput): Promise<RolloutWatchResult> {
      failpoint('worker.rollout.awaiting-work');
      let out: RolloutWatchResult = {};
      await watchUntil<V1Node>({
        ...nodeByName(kube, input.node),
        cached: oneNode(kube, input.node),
        done: (objects) => {
          const n = [...objects.values()][0];
          const done = workDone(n, input);
          if (done) out = { done, ...(n?.status?.nodeInfo?.bootID ? { bootID: n.status.nodeInfo.bootID } : {}) };
          return done !== undefined;
        },
        timeoutMs: input.renewMs ?? RENEW_MS,
        signal: Context.current().cancellationSignal,
      });
      return out;
    },
  };
}
