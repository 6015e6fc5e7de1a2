// Progress reports to another workflow without blocking the sender: a signal is a server round
// trip, so steps go on while it is in flight. One report in flight at a time, each built when it
// is sent, so reports made meanwhile coalesce into the newest state.
import { CancellationScope, sleep } from '@temporalio/workflow';

export interface ProgressReporter {
  /** Something changed: send the newest state when the channel is free. */
  report(): void;
  /** Resolves once everything reported so far has been sent. */
  flush(): Promise<void>;
}

export function latestOnly(send: () => Promise<unknown>): ProgressReporter {
  let dirty = false;
  let sending: Promise<void> | undefined;
  return {
    report() {
      dirty = true;
      const loop = async () => {
        while (dirty) {
          dirty = false;
          await send().catch(() => undefined); // best effort: the receiver may have closed
        }
        sending = undefined;
      };
      // A cancelled sender (a node cycle stopped by its request's healing) still sends its last
      // state: in the cancelled scope the send failed at once and the receiver, which may know the
      // sender only by its reports (after a continue-as-new), waited for an end it never heard.
      sending ??= CancellationScope.nonCancellable(loop);
    },
    async flush() {
      while (sending) await sending;
    },
  };
}

/**
 * Calls `publish` once things have stood still for `ms` (a timer), unless `changed` is called again
 * first. A state that passes quickly is never published: a cancelled timer costs two history events
 * and no workflow task, a report costs a signal and a task on each side.
 */
export function whenSettled(ms: number, publish: () => void): { changed(): void; cancel(): void } {
  let pending: CancellationScope | undefined;
  const cancel = () => {
    pending?.cancel();
    pending = undefined;
  };
  return {
    changed() {
      cancel();
      const scope = new CancellationScope();
      pending = scope;
      scope.run(() => sleep(ms)).then(
        () => {
          if (pending !== scope) return;
          pending = undefined;
          publish();
        },
        () => undefined, // cancelled: the state moved on
      );
    },
    cancel,
  };
}
