// Waiting for a server at start-up: a process started before Temporal or the apiserver (a rollout,
// a node reboot) keeps trying with capped backoff and says so in one line per try, instead of
// exiting with a stack trace into a crash loop.

import type { Log } from './log.js';

export interface UntilOptions {
  log: Log;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Stops the waiting (process shutdown): the last error is thrown. */
  signal?: AbortSignal;
}

export async function untilReachable<T>(what: string, attempt: () => Promise<T>, o: UntilOptions): Promise<T> {
  let delay = o.initialDelayMs ?? 1000;
  const max = o.maxDelayMs ?? 30_000;
  for (let n = 1; ; n++) {
    try {
      const value = await attempt();
      if (n > 1) o.log(`${what}: reached after ${n} attempts`);
      return value;
    } catch (err) {
      if (o.signal?.aborted) throw err;
      o.log(`${what} unreachable (${oneLine(err)}); retrying in ${Math.round(delay / 1000)}s (attempt ${n})`, { level: 'warn', server: what, attempt: n });
      if (o.signal?.aborted) throw err; // aborted while logging: no wait
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        o.signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
      delay = Math.min(max, delay * 2);
    }
  }
}

/** The first line of an error's message, without a stack: what an operator reads in a log. */
export function oneLine(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; cause?: unknown };
  let msg = typeof e?.message === 'string' && e.message ? e.message : String(err);
  // Node's fetch hides the reason (ECONNREFUSED, certificate) in its cause.
  const cause = e?.cause as { message?: unknown; code?: unknown } | undefined;
  if (cause && typeof cause.message === 'string' && !msg.includes(cause.message)) msg += `: ${cause.message}`;
  // The Temporal core SDK's transport errors are Rust debug text; the OS message inside is the news.
  const os = /tonic::transport[\s\S]*?message: "([^"]+)"/.exec(msg);
  if (os) msg = `transport error: ${os[1]}`;
  return msg.split('\n')[0]!.slice(0, 300);
}
