// Progress reports to another workflow without blocking the sender: a signal is a server round
// trip, so steps go on while it is in flight. One report in flight at a time, each built when it
// is sent, so reports made meanwhile coalesce into the newest state.
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
      sending ??= (async () => {
        while (dirty) {
          dirty = false;
          await send().catch(() => undefined); // best effort: the receiver may have closed
        }
        sending = undefined;
      })();
    },
    async flush() {
      while (sending) await sending;
    },
  };
}
