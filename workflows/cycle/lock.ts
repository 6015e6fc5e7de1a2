// One cycle per node group at a time. The lock is a child workflow with a fixed ID per node group:
// Temporal refuses to start a second one while the first runs, so "start succeeded" is "lock
// acquired", decided by the server with no race. The holder releases it with a signal.
//
// The lock is ABANDONed by its parent (not terminated with it), because the holder continues as new
// (a new run, same workflow ID) and a TERMINATE policy would end the lock at every switch. So the
// lock watches its holder instead: every 10 minutes it signals the holder's workflow ID, which
// reaches whichever run is current, and fails only once the holder has closed (completed, failed,
// terminated). Then the lock ends itself. A holder always releases at its end, so this look only
// matters for a terminated holder; it is rare so that a held lock costs almost no history (#26.1).
//
// A request that finds the lock held registers with it (lockWaiter) and waits for its lockFreed,
// sent when the lock ends: no retry loop while another request cycles the group.
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  ParentClosePolicy,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { NodeGroupAttr } from '../search-attributes.js';
import { lockFreedSignal, lockHolderProbeSignal, lockWaiterSignal, releaseLockSignal } from '../messages.js';
import { nodeGroupLockId } from '../ids.js';

/** How often a lock checks that its holder still runs (a holder releases it at its end; this is for one terminated). */
const HOLDER_PROBE_MS = 10 * 60_000;
/** A waiter tries the lock again after this long even without its lockFreed (one lost, or the lock terminated by hand). */
const WAITER_RENEWAL_MS = 10 * 60_000;
/** A lock held for days stays a short history. */
const LOCK_HISTORY_BUDGET = 2_000;

export interface NodeGroupLockInput {
  provider: string;
  group: string;
  /** The holder's workflow ID (stable across its continue-as-new). Default: the parent. */
  holder?: string;
  probeEveryMs?: number;
  /** Workflow IDs of requests waiting for this lock (carried across continue-as-new). */
  waiters?: string[];
}

/** Held while it runs: until released, cancelled, or its holder has closed. */
export async function nodeGroupLockWorkflow(input: NodeGroupLockInput): Promise<void> {
  const holder = input.holder ?? workflowInfo().parent?.workflowId;
  let released = false;
  const waiters = new Set(input.waiters ?? []);
  setHandler(releaseLockSignal, () => void (released = true));
  setHandler(lockWaiterSignal, (id) => void waiters.add(id));
  upsertSearchAttributes([{ key: NodeGroupAttr, value: input.group }]);
  setCurrentDetails(`Node group **${input.group}** (${input.provider}) is being cycled by \`${holder ?? '(none)'}\`.`);
  try {
    while (!(await condition(() => released, input.probeEveryMs ?? HOLDER_PROBE_MS))) {
      if (holder && !(await holderRuns(holder))) break;
      if (workflowInfo().historyLength > LOCK_HISTORY_BUDGET || workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof nodeGroupLockWorkflow>({ ...input, holder, waiters: [...waiters] });
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err; // continue-as-new too: the waiters go with it
  }
  await CancellationScope.nonCancellable(() => tellWaiters(waiters));
}

/** The lock ends: every waiter (also one that registers meanwhile) hears it once. */
async function tellWaiters(waiters: Set<string>): Promise<void> {
  const told = new Set<string>();
  for (;;) {
    await condition(allHandlersFinished);
    const next = [...waiters].filter((w) => !told.has(w));
    if (!next.length) return;
    for (const w of next) told.add(w);
    await Promise.all(next.map((w) => getExternalWorkflowHandle(w).signal(lockFreedSignal).catch(() => undefined)));
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

  /** A lockFreed arrived since the last try. */
  private freed = false;

  constructor(readonly ids: string[] = []) {
    setHandler(lockFreedSignal, () => void (this.freed = true));
  }

  /**
   * Takes the locks of `groups` in sorted order (so two requests on overlapping groups cannot each
   * hold one and wait for the other). While a group is held by another request it calls `waiting`
   * once, registers with the lock and tries again when the lock ends (lockFreed), or after
   * WAITER_RENEWAL_MS: a wait costs a few events, however long.
   */
  async acquire(provider: string, groups: string[], waiting: (group: string, lockId: string) => void, probeEveryMs?: number): Promise<void> {
    const holder = workflowInfo().workflowId;
    for (const group of [...new Set(groups)].sort()) {
      const workflowId = nodeGroupLockId(provider, group);
      if (this.ids.includes(workflowId)) continue;
      for (let attempt = 0; ; attempt++) {
        this.freed = false;
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
          await this.untilFreed(workflowId, holder);
        }
      }
    }
  }

  /** Registers with the held lock and waits for its end. A lock that has ended already cannot be told: try again at once. */
  private async untilFreed(lockId: string, waiter: string): Promise<void> {
    const told = await getExternalWorkflowHandle(lockId).signal(lockWaiterSignal, waiter).then(() => true, (err: unknown) => {
      if (isCancellation(err)) throw err;
      return false;
    });
    if (told) await condition(() => this.freed, WAITER_RENEWAL_MS);
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
