// One cycle per node group at a time. The lock is a child workflow with a fixed ID per node group:
// Temporal refuses to start a second one while the first runs, so "start succeeded" is "lock
// acquired", decided by the server with no race. The holder releases it with a signal; if the
// holder ends any other way (failed, terminated), the server terminates the child with it (parent
// close policy), so a lock is never left behind.
import {
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  ParentClosePolicy,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { NodeGroupAttr } from '../search-attributes.js';

export const nodeGroupLockId = (provider: string, group: string) => `lock/${provider}/${group}`;

export interface NodeGroupLockInput {
  provider: string;
  group: string;
}

/** The holder is done with the node group. */
export const releaseLockSignal = defineSignal('releaseLock');

/** Held while it runs: until released, cancelled, or terminated with its holder. */
export async function nodeGroupLockWorkflow(input: NodeGroupLockInput): Promise<void> {
  const holder = workflowInfo().parent?.workflowId ?? '(none)';
  let released = false;
  setHandler(releaseLockSignal, () => void (released = true));
  upsertSearchAttributes([{ key: NodeGroupAttr, value: input.group }]);
  setCurrentDetails(`Node group **${input.group}** (${input.provider}) is being cycled by \`${holder}\`.`);
  try {
    await condition(() => released);
  } catch (err) {
    if (!isCancellation(err)) throw err;
  }
}

export interface HeldLocks {
  release(): Promise<void>;
}

/**
 * Takes the locks of `groups` in sorted order (so two requests on overlapping groups cannot each
 * hold one and wait for the other). While a group is held by another request it calls `waiting`
 * once and tries again after 5 s, backing off to 30 s (a long wait stays a short history).
 */
export async function acquireNodeGroupLocks(provider: string, groups: string[], waiting: (group: string, lockId: string) => void): Promise<HeldLocks> {
  const held: Array<ChildWorkflowHandle<typeof nodeGroupLockWorkflow>> = [];
  for (const group of [...new Set(groups)].sort()) {
    const workflowId = nodeGroupLockId(provider, group);
    for (let attempt = 0; ; attempt++) {
      try {
        // Not cancelled with the holder: a deleted request keeps its groups until its healing is done.
        const child = await CancellationScope.nonCancellable(() =>
          startChild(nodeGroupLockWorkflow, { workflowId, args: [{ provider, group }], parentClosePolicy: ParentClosePolicy.TERMINATE }),
        );
        held.push(child);
        break;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        if (attempt === 0) waiting(group, workflowId);
        await sleep(Math.min(30_000, 5_000 * 2 ** Math.min(attempt, 3)));
      }
    }
  }
  return {
    async release() {
      await CancellationScope.nonCancellable(() => Promise.all(held.map(async (h) => {
        await h.signal(releaseLockSignal);
        await h.result();
      })));
    },
  };
}
