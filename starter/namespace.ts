import type { CoreV1Api } from '@kubernetes/client-node';
import { apiStatus } from '../kube/client.js';

/**
 * Creates a namespace (an existing one is fine) and waits for its default ServiceAccount: until it
 * exists, the apiserver refuses pods there. For the main job, the demo, the benchmarks and the tests;
 * a client helper, not an activity: the worker never creates namespaces (and its ClusterRole cannot).
 */
export async function createReadyNamespace(core: CoreV1Api, name: string, timeoutMs = 60_000): Promise<void> {
  await core.createNamespace({ body: { metadata: { name } } }).catch((err: unknown) => {
    if (apiStatus(err) !== 409) throw err;
  });
  for (const deadline = Date.now() + timeoutMs; ; ) {
    try {
      await core.readNamespacedServiceAccount({ name: 'default', namespace: name });
      return;
    } catch (err) {
      if (apiStatus(err) !== 404 || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
