// What scripted activities (test/support/fake-*.ts) share: a log of every call, its input and
// output and whether the workflow cancelled it, and a wait that polls, heartbeats (so a cancel
// reaches it) and stops when cancelled, as the real waits do.
import { Context, heartbeat } from '@temporalio/activity';

export interface Call {
  name: string;
  input: unknown;
  /** Arguments after the first, when there are any. */
  more?: unknown[];
  output?: unknown;
  /** The workflow cancelled it (e.g. a signal woke the drain). */
  cancelled?: boolean;
  startedAt: number;
  endedAt?: number;
  /** ns/name of the pods on the node when it was called (drains). */
  onNode: string[];
}

export class CallLog {
  readonly calls: Call[] = [];

  callsOf(name: string): Call[] {
    return this.calls.filter((c) => c.name === name);
  }

  /** What the log records besides the call (FakeDrain: the pods on the node). */
  protected context(): string[] {
    return [];
  }

  /** The activity `fn`, logged under `name`. */
  protected logged<I, O, R extends unknown[] = []>(name: string, fn: (input: I, ...more: R) => Promise<O>): (input: I, ...more: R) => Promise<O> {
    return async (input: I, ...more: R): Promise<O> => {
      const call: Call = { name, input: structuredClone(input), startedAt: Date.now(), onNode: this.context(), ...(more.length ? { more: structuredClone(more) } : {}) };
      this.calls.push(call);
      try {
        const out = await fn(input, ...more);
        call.output = structuredClone(out);
        // The wave wait answers a cancel with what it did (end 'Cancelled') instead of throwing.
        if (Context.current().cancellationSignal.aborted) call.cancelled = true;
        return out;
      } catch (err) {
        if (Context.current().cancellationSignal.aborted) call.cancelled = true;
        throw err;
      } finally {
        call.endedAt = Date.now();
      }
    };
  }
}

const POLL_MS = 20;

/** Polls `cond` until true (→ true) or `timeoutMs` (→ false); heartbeats, so a cancel arrives; rejects when cancelled. */
export async function until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const ctx = Context.current();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (cond()) return true;
    if (Date.now() >= deadline) return false;
    heartbeat();
    await ctx.sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
  }
}
