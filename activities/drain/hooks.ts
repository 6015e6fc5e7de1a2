// Lifecycle hooks (api/lifecycle-hooks.ts): wait, by a watch on the one Node, until no hook of a
// stage is left on it. One activity per window, heartbeating; the Event that says who is waited
// for is written at the start of the wait, once per workflow, stage and set of owners (a retry or a
// later window hits 409), plus a Warning for annotations read in a way their writer may not have meant.
import { Context, heartbeat } from '@temporalio/activity';
import type { V1Node } from '@kubernetes/client-node';
import { HOOK_PREFIX, lifecycleHooks, ownersText, type HookStage } from '../../api/lifecycle-hooks.js';
import { createEventActivities } from '../events.js';
import type { Kube } from '../../kube/client.js';
import { watchUntil } from '../../kube/watch.js';
import { freshNode, nodeByName } from '../node-cache.js';

export interface HookWaitResult {
  /** Owners still holding the node when the wait ended; empty: released (or the node is gone). */
  owners: string[];
  nodeGone: boolean;
}

export const HOOK_EVENT_REASON: Record<HookStage, string> = { 'pre-drain': 'WaitingForPreDrainHooks', 'pre-terminate': 'WaitingForPreTerminateHooks' };

export function createHookActivities(kube: Kube) {
  const { recordEvent } = createEventActivities(kube);
  const nodeEvent = (nodeName: string, node: V1Node | undefined) => ({ kind: 'Node', apiVersion: 'v1', name: nodeName, uid: node?.metadata?.uid });
  return {
    /**
     * Until no `stage` hook is on the node, the node is gone, other owners hold it (a waiting workflow
     * then says so), or `timeoutMs`; `owners` names who still holds it. Read-only but for its Events;
     * safe to retry and to run again after a crash.
     */
    async waitForLifecycleHooks(input: { nodeName: string; stage: HookStage; timeoutMs: number }): Promise<HookWaitResult> {
      const ctx = Context.current();
      const first = await freshNode(kube, input.nodeName); // a hook added just before the drain is never missed
      if (!first) return { owners: [], nodeGone: true };
      const hooks = lifecycleHooks(first.metadata?.annotations, input.stage);
      if (!hooks.owners.length) return { owners: [], nodeGone: false };
      const wf = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
      await recordEvent({
        involved: nodeEvent(input.nodeName, first),
        type: 'Normal',
        reason: HOOK_EVENT_REASON[input.stage],
        message: `waiting for ${input.stage} hooks: ${ownersText(hooks.owners, 10)} (remove annotation ${hooks.owners.length === 1 ? '' : 'each '}${HOOK_PREFIX[input.stage]}<owner> to release; ${wf})`,
        dedupKey: `${wf}/${input.stage}/${hooks.owners.join(',')}`,
      });
      for (const w of hooks.warnings) {
        await recordEvent({ involved: nodeEvent(input.nodeName, first), type: 'Warning', reason: 'LifecycleHookAnnotation', message: w, dedupKey: `${wf}/${input.stage}/warning/${w}` });
      }
      let owners = hooks.owners;
      let nodeGone = false;
      await watchUntil<V1Node>({
        ...nodeByName(kube, input.nodeName),
        done: (nodes) => {
          const n = [...nodes.values()][0];
          nodeGone = n === undefined;
          owners = n ? lifecycleHooks(n.metadata?.annotations, input.stage).owners : [];
          return owners.join() !== hooks.owners.join();
        },
        timeoutMs: input.timeoutMs,
        onTick: () => heartbeat({ stage: input.stage, owners }),
        signal: ctx.cancellationSignal,
      });
      return { owners, nodeGone };
    },
  };
}
