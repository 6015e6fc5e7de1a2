// Kubernetes client construction. KUBECONFIG (or ~/.kube/config) outside a cluster, the
// service account inside one: the same rules as kubectl and client-go.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { KubeConfig, CoreV1Api, ApiException, VersionApi } from '@kubernetes/client-node';

export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: set KUBECONFIG or run in a cluster');
  return kc;
}

type AgentFactory = (cluster: unknown, options: Record<string, unknown>) => HttpAgent;
const pooled = new WeakSet<KubeConfig>();

/**
 * Makes every request of this config reuse keep-alive connections. client-node 1.x builds a new
 * https.Agent for every request, so each API call paid a full TLS handshake on both ends: under a
 * drain of hundreds of pods that handshake, not the eviction, was most of the apiserver's CPU.
 * Agents are cached per TLS identity, so rotated client certificates still get a fresh one.
 */
export function poolConnections(kc: KubeConfig): KubeConfig {
  if (pooled.has(kc)) return kc;
  pooled.add(kc);
  const target = kc as unknown as { createAgent: AgentFactory };
  const original = target.createAgent.bind(kc);
  const agents = new Map<string, HttpAgent>();
  // The same identity comes back on every request (the CA as a fresh but equal Buffer): compare
  // with the last one before building a key (JSON of a Buffer is an array of numbers: slow).
  const same = (a: unknown, b: unknown) => a === b || (Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b));
  let last: { parts: unknown[]; agent: HttpAgent } | undefined;
  target.createAgent = (cluster, options) => {
    const c = cluster as { server?: string; proxyUrl?: string } | null;
    if (c?.proxyUrl) return original(cluster, options);
    const parts = [c?.server, options.ca, options.cert, options.key, options.servername, options.rejectUnauthorized];
    if (last && parts.every((p, i) => same(p, last!.parts[i]))) return last.agent;
    const key = JSON.stringify(parts);
    let agent = agents.get(key);
    if (!agent) {
      if (agents.size > 8) agents.clear(); // old identities after rotation: let their sockets close
      const base = original(cluster, options);
      // Enough idle sockets for a wave of parallel evictions, so the next wave needs no new handshakes.
      const keepAlive = { ...options, keepAlive: true, maxFreeSockets: 256 };
      agent = base instanceof HttpsAgent ? new HttpsAgent(keepAlive) : new HttpAgent(keepAlive);
      base.destroy();
      agents.set(key, agent);
    }
    last = { parts, agent };
    return agent;
  };
  return kc;
}

export interface Kube {
  config: KubeConfig;
  core: CoreV1Api;
}

export function createKube(config: KubeConfig = loadKubeConfig()): Kube {
  poolConnections(config);
  return { config, core: config.makeApiClient(CoreV1Api) };
}

/** The HTTP status of a Kubernetes API error, or undefined for anything else. */
export function apiStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** The apiserver's address, for messages. */
export const apiserverOf = (kube: Kube): string => kube.config.getCurrentCluster()?.server ?? 'the apiserver';

/** Resolves once the apiserver answers GET /version (readable by every authenticated user); throws otherwise. */
export async function apiserverAnswers(kube: Kube): Promise<void> {
  await kube.config.makeApiClient(VersionApi).getCode();
}
