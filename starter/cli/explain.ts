// How any error becomes one line for a person: what was wrong, naming the address, the file or the
// object. No stack traces.
import { ApiException } from '@kubernetes/client-node';
import { ServiceError, WorkflowFailedError } from '@temporalio/client';
import { NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { CycleFailed } from '../cycle-cli.js';
import { CliError, UsageError } from './errors.js';

/** The message of a Kubernetes API error: the Status object's own words, not the HTTP dump. */
export function kubeMessage(err: ApiException<unknown>): string {
  let body = err.body as unknown;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // not JSON: keep the text
    }
  }
  const message = typeof body === 'object' && body && 'message' in body ? String((body as { message: unknown }).message) : typeof body === 'string' ? body : '';
  return `${err.code}${message ? ` ${message}` : ''}`.split('\n')[0]!;
}

/** Network-level causes (ECONNREFUSED, ENOTFOUND, ...), which fetch wraps. */
function rootCause(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e instanceof Error && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

export interface ErrorContext {
  temporalAddress: string;
  temporalNamespace: string;
  kubeServer?: string;
}

/** One line for any error, naming where it came from when it is known. */
export function oneLine(err: unknown, ctx: ErrorContext): string {
  const first = (s: string) => s.split('\n')[0]!.trim();
  if (err instanceof CliError || err instanceof UsageError || err instanceof CycleFailed) return err.message;
  if (err instanceof WorkflowNotFoundError) {
    return `no workflow ${err.workflowId} in Temporal namespace ${ctx.temporalNamespace} at ${ctx.temporalAddress}`;
  }
  if (err instanceof NamespaceNotFoundError) return `Temporal namespace ${err.namespace} not found at ${ctx.temporalAddress} (TEMPORAL_NAMESPACE)`;
  if (err instanceof ServiceError) return `Temporal at ${ctx.temporalAddress}: ${first((err.cause as Error | undefined)?.message ?? err.message)}`;
  if (err instanceof WorkflowFailedError) return first((err.cause as Error | undefined)?.message ?? err.message);
  if (err instanceof ApiException) return `Kubernetes API${ctx.kubeServer ? ` at ${ctx.kubeServer}` : ''}: ${kubeMessage(err)}`;
  const code = rootCause(err);
  if (code && ctx.kubeServer && /request to|fetch failed|ECONN|ENOTFOUND|socket/i.test(String((err as Error).message))) {
    return `cannot reach the Kubernetes API server at ${ctx.kubeServer}: ${code}`;
  }
  return first(err instanceof Error ? err.message || err.name : String(err));
}
