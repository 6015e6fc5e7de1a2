// What every kind's Kubernetes calls share: the path of a custom resource's collection (what its
// reflector watches) and which failed writes
// can never succeed (their target is going away) so the bridge skips them instead of retrying.
import { ApiException } from '@kubernetes/client-node';

export const collectionPath = (r: { group: string; version: string; plural: string }, namespace?: string) =>
  `/apis/${r.group}/${r.version}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${r.plural}`;

/**
 * A write that can never succeed because its target is going away: 404 (the object or its
 * namespace is gone), or 403 because the namespace is terminating (NamespaceLifecycle refuses
 * every create there). Retrying it would only loop; the bridge skips it.
 */
export function isGoneOrTerminating(err: unknown): boolean {
  if (!(err instanceof ApiException)) return false;
  if (err.code === 404) return true;
  if (err.code !== 403) return false;
  let body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return /because it is being terminated/.test(body as string);
    }
  }
  const s = (body ?? {}) as { message?: string; details?: { causes?: Array<{ reason?: string }> } };
  return (s.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating') || /because it is being terminated/.test(s.message ?? '');
}
