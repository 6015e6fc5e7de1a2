// What an eviction's answer means, in the apiserver's own words (a PDB's message names the budget
// and its numbers, so it is kept verbatim).
import { ApiException } from '@kubernetes/client-node';

/**
 * NotTried: the caller stopped (a cancelled wait) before this pod's eviction was sent. Withdrawn: not
 * sent because the operator skipped or force-deletes the pod (activities/drain/decisions.ts).
 */
export type EvictionOutcome = 'Evicted' | 'Gone' | 'AlreadyTerminating' | 'Blocked' | 'MultiplePDBs' | 'NamespaceTerminating' | 'Failed' | 'NotTried' | 'Withdrawn';

interface StatusBody {
  message?: string;
  reason?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

function statusBody(err: ApiException<unknown>): StatusBody {
  const b = err.body;
  if (typeof b === 'string') {
    try {
      return JSON.parse(b) as StatusBody;
    } catch {
      return { message: b };
    }
  }
  return (b ?? {}) as StatusBody;
}

export function classifyEvictionError(err: unknown): { outcome: EvictionOutcome; reason: string } {
  if (!(err instanceof ApiException)) return { outcome: 'Failed', reason: `failed to evict Pod: ${(err as Error)?.message ?? String(err)}` };
  const s = statusBody(err);
  const causes = (s.details?.causes ?? []).map((c) => c.message).filter(Boolean);
  switch (err.code) {
    case 404:
      return { outcome: 'Gone', reason: 'Pod not found' };
    case 409:
      // Our uid precondition failed: a different pod of the same name (StatefulSet) stands there now.
      // Any other conflict (e.g. on the PDB's status) is transient: retry it like a refusal.
      if (/precondition/i.test(s.message ?? '')) return { outcome: 'Gone', reason: 'Pod was replaced by another of the same name' };
      return { outcome: 'Blocked', reason: `conflict, will retry: ${s.message ?? 'eviction conflict'}` };
    case 429: {
      const msg = [s.message?.replace(/^Cannot/, 'cannot'), ...causes].filter(Boolean).join(' ');
      return { outcome: 'Blocked', reason: msg || 'eviction refused (429)' };
    }
    case 500:
      if (/more than one PodDisruptionBudget/i.test(s.message ?? '')) {
        return { outcome: 'MultiplePDBs', reason: 'Pod is covered by more than one PodDisruptionBudget; the eviction API refuses it until only one matches' };
      }
      break;
    case 403:
      if ((s.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')) {
        return { outcome: 'NamespaceTerminating', reason: 'namespace is terminating; the namespace controller deletes the Pod' };
      }
      break;
  }
  return { outcome: 'Failed', reason: `failed to evict Pod: ${err.code} ${[s.message, ...causes].filter(Boolean).join(' ')}` };
}
