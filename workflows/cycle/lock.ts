// One cycle per node group at a time. The lock is a child workflow with a fixed ID per node group:
// Temporal refuses to start a second one while the first runs, so "start succeeded" is "lock
// acquired", decided by the server with no race. The holder releases it with a signal.
//
// The lock is ABANDONed by its parent (not terminated with it), because the holder continues as new
// (a new run, same workflow ID) and a TERMINATE policy would end the lock at every switch. So the
// lock watches its holder instead: every minute it signals the holder's workflow ID, which reaches
// whichever run is current, and fails only once the holder has closed (completed, failed,
// terminated). Then the lock ends itself: a lock never outlives its holder by more than a minute.
import {
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
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
import { lockHolderProbeSignal, releaseLockSignal } from '../messages.js';
import { nodeGroupLockId } from '../ids.js';

/** How often a lock checks that its holder still runs. */
const HOLDER_PROBE_MS = 60_000;
/** A lock held for days stays a short history. */
const LOCK_HISTORY_BUDGET = 2_000;

export interface NodeGroupLockInput {
  provider: string;
  group: string;
  /** The holder's workflow ID (stable across its continue-as-new). Default: the parent. */
  holder?: string;
  probeEveryMs?: number;
}

/** Held while it runs: until released, cancelled, or its holder has closed. */
export async function nodeGroupLockWorkflow(input: NodeGroupLockInput): Promise<void> {
  const holder = input.holder ?? workflowInfo().parent?.workflowId;
  let released = false;
  setHandler(releaseLockSignal, () => void (released = true));
  upsertSearchAttributes([{ key: NodeGroupAttr, value: input.group }]);
  setCurrentDetails(`Node group **${input.group}** (${input.provider}) is being cycled by \`${holder ?? '(none)'}\`.`);
  try {
    while (!(await condition(() => released, input.probeEveryMs ?? HOLDER_PROBE_MS))) {
      if (holder && !(await holderRuns(holder))) return;
      if (workflowInfo().historyLength > LOCK_HISTORY_BUDGET || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof nodeGroupLockWorkflow>({ ...input, holder });
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
  }
}

async function holderRuns(holder: string): Promise<boolean> {
  try {
    await getExternalWorkflowHandle(holder).signal(lockHolderProbeSignal);
    return true;
  } catch (err) {
    if (isCancellation(err)) throw err;
    return false; // not found: the holder has closed
  }
}

/** The locks a request holds, by workflow ID (carried across its continue-as-new). */
export class HeldLocks {
  /** Handles for the locks this run took: their end can be awaited. */
  private readonly handles = new Map<string, ChildWorkflowHandle<typeof nodeGroupLockWorkflow>>();

  constructor(readonly ids: string[] = []) {}

  /**
   * Takes the locks of `groups` in sorted order (so two requests on overlapping groups cannot each
   * hold one and wait for the other). While a group is held by another request it calls `waiting`
   * once and tries again after 5 s, backing off to 30 s (a long wait stays a short history).
   */
  async acquire(provider: string, groups: string[], waiting: (group: string, lockId: string) => void, probeEveryMs?: number): Promise<void> {
    const holder = workflowInfo().workflowId;
    for (const group of [...new Set(groups)].sort()) {
      const workflowId = nodeGroupLockId(provider, group);
      if (this.ids.includes(workflowId)) continue;
      for (let attempt = 0; ; attempt++) {
        try {
          // Not cancelled with the holder: a deleted request keeps its groups until its healing is done.
          const child = await CancellationScope.nonCancellable(() =>
            startChild(nodeGroupLockWorkflow, { workflowId, args: [{ provider, group, holder, probeEveryMs }], parentClosePolicy: ParentClosePolicy.ABANDON }),
          );
          this.handles.set(workflowId, child);
          this.ids.push(workflowId);
          break;
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          if (attempt === 0) waiting(group, workflowId);
          await sleep(Math.min(30_000, 5_000 * 2 ** Math.min(attempt, 3)));
        }
      }
    }
  }

  /** Releases every lock; waits for the ones this run took to end (a lock taken by an earlier run ends on the signal). */
  async release(): Promise<void> {
    await CancellationScope.nonCancellable(() =>
      Promise.all(
        this.ids.map(async (id) => {
          const h = this.handles.get(id);
          if (!h) return getExternalWorkflowHandle(id).signal(releaseLockSignal).catch(() => undefined);
          await h.signal(releaseLockSignal);
          await h.result();
        }),
      ),
    );
    this.ids.length = 0;
  }
}
