// Kubernetes client construction. KUBECONFIG (or ~/.kube/config) outside a cluster, the
// service account inside one: the same rules as kubectl and client-go.
import { KubeConfig, CoreV1Api, ApiException } from '@kubernetes/client-node';

export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: set KUBECONFIG or run in a cluster');
  return kc;
}

export interface Kube {
  config: KubeConfig;
  core: CoreV1Api;
}

export function createKube(config: KubeConfig = loadKubeConfig()): Kube {
  return { config, core: config.makeApiClient(CoreV1Api) };
}

/** The HTTP status of a Kubernetes API error, or undefined for anything else. */
export function apiStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}
