// Which failed writes of the bridge can never succeed (their target is going away), so they are
// skipped rather than retried: 404, and 403 from a terminating namespace, never another 403.
import { ApiException } from '@kubernetes/client-node';
import { isGoneOrTerminating } from '../../starter/bridge/kube-objects.js';

const terminating = {
  kind: 'Status',
  status: 'Failure',
  message: 'cyclenodestatuses.slipway.dev "r-n1" is forbidden: unable to create new content in namespace app because it is being terminated',
  reason: 'Forbidden',
  details: { name: 'r-n1', kind: 'cyclenodestatuses', causes: [{ reason: 'NamespaceTerminating', message: 'namespace app is being terminated', field: 'metadata.namespace' }] },
  code: 403,
};

describe('isGoneOrTerminating', () => {
  test('404 and a terminating namespace (body as JSON text or object) are', () => {
    expect(isGoneOrTerminating(new ApiException(404, 'not found', '{}', {}))).toBe(true);
    expect(isGoneOrTerminating(new ApiException(403, 'forbidden', JSON.stringify(terminating), {}))).toBe(true);
    expect(isGoneOrTerminating(new ApiException(403, 'forbidden', terminating, {}))).toBe(true);
  });

  test('RBAC refusals, conflicts, server errors and non-API errors are not', () => {
    const rbac = { ...terminating, message: 'cyclenodestatuses.slipway.dev is forbidden: User "x" cannot create resource', details: { causes: [] } };
    expect(isGoneOrTerminating(new ApiException(403, 'forbidden', JSON.stringify(rbac), {}))).toBe(false);
    expect(isGoneOrTerminating(new ApiException(409, 'conflict', '{}', {}))).toBe(false);
    expect(isGoneOrTerminating(new ApiException(500, 'boom', '{}', {}))).toBe(false);
    expect(isGoneOrTerminating(new Error('ECONNREFUSED'))).toBe(false);
  });
});
