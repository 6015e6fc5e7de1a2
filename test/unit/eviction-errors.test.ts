import { ApiException } from '@kubernetes/client-node';
import { classifyEvictionError } from '../../activities/drain/eviction-errors.js';

// client-node 1.4 hands the response body over as the raw JSON text of a metav1.Status.
function apiError(code: number, status: Record<string, unknown>): ApiException<string> {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, ...status });
  return new ApiException<string>(code, `HTTP ${code}`, body, { 'content-type': 'application/json' });
}

describe('classifyEvictionError', () => {
  test("a PDB refusal (429) is Blocked and keeps the PDB's own words, cause included", () => {
    const err = apiError(429, {
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }] },
    });
    const r = classifyEvictionError(err);
    expect(r.outcome).toBe('Blocked');
    expect(r.reason).toBe("cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 3 healthy pods and has 3 currently");
  });

  test('a 429 with an empty body is still Blocked, with a generic reason', () => {
    expect(classifyEvictionError(new ApiException(429, 'Too Many Requests', '', {}))).toEqual({ outcome: 'Blocked', reason: 'eviction refused (429)' });
  });

  test('a 429 body that is not JSON is kept as the reason', () => {
    expect(classifyEvictionError(new ApiException(429, 'x', 'Cannot evict pod: rate limited', {}))).toEqual({ outcome: 'Blocked', reason: 'cannot evict pod: rate limited' });
  });

  test('404: the pod is Gone', () => {
    expect(classifyEvictionError(apiError(404, { message: 'pods "web-0" not found', reason: 'NotFound' })).outcome).toBe('Gone');
  });

  test('409 (uid precondition failed): the pod was replaced, which counts as Gone', () => {
    const r = classifyEvictionError(
      apiError(409, { message: 'Operation cannot be fulfilled on Pod "web-0": Precondition failed: UID in precondition: a, UID in object meta: b', reason: 'Conflict' }),
    );
    expect(r).toEqual({ outcome: 'Gone', reason: 'Pod was replaced by another of the same name' });
  });

  test('409 from another conflict (the PDB status update) is retried like a refusal, not taken as Gone', () => {
    const r = classifyEvictionError(
      apiError(409, { message: 'Operation cannot be fulfilled on poddisruptionbudgets.policy "web": the object has been modified', reason: 'Conflict' }),
    );
    expect(r.outcome).toBe('Blocked');
    expect(r.reason).toContain('poddisruptionbudgets.policy "web"');
  });

  test('500 for a pod under more than one PDB is MultiplePDBs', () => {
    const r = classifyEvictionError(
      apiError(500, { message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', reason: 'InternalError' }),
    );
    expect(r.outcome).toBe('MultiplePDBs');
    expect(r.reason).toContain('more than one PodDisruptionBudget');
  });

  test('403 with cause NamespaceTerminating is NamespaceTerminating', () => {
    const r = classifyEvictionError(
      apiError(403, {
        message: 'pods "web-0" is forbidden: unable to create new content in namespace app because it is being terminated',
        reason: 'Forbidden',
        details: { name: 'web-0', kind: 'pods', causes: [{ reason: 'NamespaceTerminating', message: 'namespace app is being terminated', field: 'metadata.namespace' }] },
      }),
    );
    expect(r.outcome).toBe('NamespaceTerminating');
  });

  test('a 403 without the NamespaceTerminating cause (RBAC) is Failed', () => {
    const r = classifyEvictionError(apiError(403, { message: 'pods "web-0" is forbidden: User "x" cannot create resource "pods/eviction"', reason: 'Forbidden' }));
    expect(r).toEqual({ outcome: 'Failed', reason: 'failed to evict Pod: 403 pods "web-0" is forbidden: User "x" cannot create resource "pods/eviction"' });
  });

  test('a 500 that is not about PDBs is Failed with its code and message', () => {
    expect(classifyEvictionError(apiError(500, { message: 'etcdserver: request timed out', reason: 'InternalError' }))).toEqual({
      outcome: 'Failed',
      reason: 'failed to evict Pod: 500 etcdserver: request timed out',
    });
  });

  test('other codes are Failed with code, message and causes', () => {
    const r = classifyEvictionError(apiError(422, { message: 'Eviction is invalid', details: { causes: [{ message: 'deleteOptions.gracePeriodSeconds: must be >= 0' }] } }));
    expect(r).toEqual({ outcome: 'Failed', reason: 'failed to evict Pod: 422 Eviction is invalid deleteOptions.gracePeriodSeconds: must be >= 0' });
  });

  test('an error that is not an ApiException (network) is Failed with its message', () => {
    expect(classifyEvictionError(new Error('connect ECONNREFUSED 127.0.0.1:6443'))).toEqual({
      outcome: 'Failed',
      reason: 'failed to evict Pod: connect ECONNREFUSED 127.0.0.1:6443',
    });
    expect(classifyEvictionError('boom').outcome).toBe('Failed');
  });
});
