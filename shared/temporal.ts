// How the worker, the bridge and the CLI reach Temporal. Defaults are the local dev server;
// a real deployment sets TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE and either mTLS files or an API key.
// Here, below the worker and its clients, so a client never imports worker/. Node-only (it reads
// the TLS files): never imported by workflows/ (the layers test says so, and the bundle refuses it).
import { readFileSync } from 'node:fs';
import type { NativeConnectionOptions } from '@temporalio/worker';

export const TASK_QUEUE = process.env.SLIPWAY_TASK_QUEUE ?? 'slipway';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Accepted by both the worker's NativeConnection and the client's Connection. */
  connection: NativeConnectionOptions & { address: string };
}

type Env = Record<string, string | undefined>;

export function temporalSettings(env: Env = process.env): TemporalSettings {
  const address = env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = env.TEMPORAL_NAMESPACE ?? 'default';
  const connection: TemporalSettings['connection'] = { address };
  const certPath = env.TEMPORAL_TLS_CERT;
  const keyPath = env.TEMPORAL_TLS_KEY;
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate and key)');
  }
  const wantsTls = Boolean(certPath) || Boolean(env.TEMPORAL_TLS_CA) || Boolean(env.TEMPORAL_API_KEY) || env.TEMPORAL_TLS === 'true';
  if (wantsTls) {
    connection.tls = {
      serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME,
      serverRootCACertificate: env.TEMPORAL_TLS_CA ? readFileSync(env.TEMPORAL_TLS_CA) : undefined,
      clientCertPair: certPath && keyPath ? { crt: readFileSync(certPath), key: readFileSync(keyPath) } : undefined,
    };
  }
  if (env.TEMPORAL_API_KEY) {
    connection.apiKey = env.TEMPORAL_API_KEY;
    connection.metadata = { 'temporal-namespace': namespace };
  }
  return { address, namespace, taskQueue: env.SLIPWAY_TASK_QUEUE ?? TASK_QUEUE, connection };
}

/** The Web UI link for a workflow, for messages to people. */
export function webUiLink(workflowId: string, env: Env = process.env): string {
  const base = env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233';
  const ns = env.TEMPORAL_NAMESPACE ?? 'default';
  return `${base}/namespaces/${encodeURIComponent(ns)}/workflows/${encodeURIComponent(workflowId)}`;
}
