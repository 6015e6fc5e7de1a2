// A Temporal client from the same settings the worker uses.
import { hostname, userInfo } from 'node:os';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions, type WorkflowClientInterceptor } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { temporalSettings, type TemporalSettings } from '../shared/temporal.js';

type GrpcInterceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

/**
 * connectTimeout: how long to try before giving up (the SDK's default is 10 s); grpc and workflow:
 * interceptors to add (the CLI's debug lines).
 */
export async function connectClient(
  settings: TemporalSettings = temporalSettings(),
  opts: { connectTimeout?: Duration; grpc?: GrpcInterceptor[]; workflow?: WorkflowClientInterceptor[] } = {},
): Promise<Client> {
  const retries = new RetryTimers();
  const connection = await Connection.connect({ ...settings.connection, interceptors: [...(opts.grpc ?? []), retries.interceptor()], ...(opts.connectTimeout !== undefined && { connectTimeout: opts.connectTimeout }) });
  const close = connection.close.bind(connection);
  connection.close = async () => {
    await retries.settle();
    return close();
  };
  return new Client({ connection, namespace: settings.namespace, identity: callerIdentity(), interceptors: { workflow: opts.workflow ?? [] } });
}

/** The longest close() waits for a scheduled retry. */
const SETTLE_MAX_MS = 15_000;

/**
 * The SDK's retry interceptor, with its default policy, made safe to close: it retries a failed call
 * on a timer that Connection.close() does not clear, and a retry firing after the close throws
 * "Channel has been shut down" inside that timer, outside any caller: an uncaught exception (it failed
 * a test suite, and could end a CLI run or the bridge). So the connection knows when its last
 * scheduled retry fires, close() waits for it (bounded), and nothing is retried once closing.
 */
export class RetryTimers {
  private quietAt = 0;
  private closing = false;

  interceptor() {
    return makeGrpcRetryInterceptor(this.options());
  }

  /** The SDK's default retry options, observed. */
  options(): GrpcRetryOptions {
    const base = defaultGrpcRetryOptions();
    return {
      retryableDecider: (attempt, status) => !this.closing && base.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => {
        const ms = base.delayFunction(attempt, status);
        this.quietAt = Math.max(this.quietAt, Date.now() + ms + 50);
        return ms;
      },
    };
  }

  /** Resolves once no scheduled retry is left to fire (at most SETTLE_MAX_MS); later failures are not retried. */
  async settle(maxMs = SETTLE_MAX_MS): Promise<void> {
    const until = Date.now() + maxMs;
    while (this.quietAt > Date.now() && Date.now() < until) await new Promise((r) => setTimeout(r, Math.min(this.quietAt, until) - Date.now()));
    this.closing = true;
  }
}

/**
 * Who is calling: SLIPWAY_IDENTITY, else user@host. Temporal records it with every start, signal and
 * update in the workflow's history; the CLI also puts it in the signals that force pods.
 */
export function callerIdentity(): string {
  if (process.env.SLIPWAY_IDENTITY) return process.env.SLIPWAY_IDENTITY;
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container with an arbitrary uid)
  }
  return `${user}@${hostname()}`;
}
