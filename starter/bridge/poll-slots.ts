// #28: the bridge follows each workflow with a history long-poll (tracker.ts), and Temporal's
// frontend allows a namespace only so many long-polls of one API at once (frontend.namespaceCount,
// 1,200 by default; GetWorkflowExecutionHistory with waitNewEvent is one such API, so the bridge
// shares it with every other waiter on a workflow's result). At 2,000 Idle NodeMaintenances the
// bridge passed it: its polls were refused (RESOURCE_EXHAUSTED "namespace concurrent poller limit
// exceeded") and retried with backoff, and it never caught up. So it holds at most
// SLIPWAY_BRIDGE_HISTORY_POLLS (500) long-polls at once. A workflow whose last poll brought events
// is served first, so busy workflows keep following at once; quiet ones (an Idle maintenance's poll
// is answered empty after ~20 s) take turns, and a change to one of them shows when its turn comes
// (its poll then answers at once), within about (quiet workflows / slots) × 20 s.

export const DEFAULT_HISTORY_POLLS = 500;

export function historyPollsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.SLIPWAY_BRIDGE_HISTORY_POLLS);
  return Number.isInteger(v) && v > 0 ? v : DEFAULT_HISTORY_POLLS;
}

interface Waiter {
  go: () => void;
}

export class PollSlots {
  private used = 0;
  /** Waiting for a slot: those whose last poll brought events first, then the quiet ones, each in arrival order. */
  private readonly busy: Waiter[] = [];
  private readonly quiet: Waiter[] = [];

  constructor(readonly max: number) {}

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.busy.length + this.quiet.length;
  }

  /** Runs `poll` in a slot, waiting for one (busy callers first); an abort while waiting rejects with its reason. */
  async run<T>(busy: boolean, signal: AbortSignal, poll: () => Promise<T>): Promise<T> {
    await this.take(busy, signal);
    try {
      return await poll();
    } finally {
      this.give();
    }
  }

  private take(busy: boolean, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.used < this.max) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const queue = busy ? this.busy : this.quiet;
      const w: Waiter = {
        go: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(); // the slot passes from the giver to this waiter: `used` is unchanged
        },
      };
      const onAbort = () => {
        const i = queue.indexOf(w);
        if (i >= 0) queue.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      queue.push(w);
    });
  }

  private give(): void {
    const next = this.busy.shift() ?? this.quiet.shift();
    if (next) next.go();
    else this.used--;
  }
}
