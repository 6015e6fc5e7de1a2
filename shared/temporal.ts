// How the worker, the bridge and the CLI reach Temporal. Defaults are the local dev server;
// a real deployment sets TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE and either mTLS files or an API key
// (Temporal's standard variables, or a temporal CLI profile: shared/temporal-config.ts).
// Here, below the worker and its clients, so a client never imports worker/. Node-only (it reads
// the TLS files): never imported by workflows/ (the layers test says so, and the bundle refuses it).
import { readFileSync } from 'node:fs';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { clientProfile } from './temporal-config.js';

export const TASK_QUEUE = process.env.SLIPWAY_TASK_QUEUE ?? 'slipway';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Accepted by both the worker's NativeConnection and the client's Connection. */
  connection: NativeConnectionOptions & { address: string };
}

type Env = Record<string, string | undefined>;

/** Overrides from a command line (the CLI's --temporal-address, --temporal-namespace). */
export interface TemporalOverrides {
  address?: string;
  namespace?: string;
}

/** Flags over the standard TEMPORAL_* variables over the temporal CLI's profile (shared/temporal-config.ts). */
export function temporalSettings(env: Env = process.env, over: TemporalOverrides = {}): TemporalSettings {
  const p = clientProfile(env);
  const address = over.address ?? p.address ?? '127.0.0.1:7233';
  const namespace = over.namespace ?? p.namespace ?? 'default';
  const connection: TemporalSettings['connection'] = { address };
  const t = p.tls ?? {};
  if (Boolean(t.clientCertData || t.clientCertPath) !== Boolean(t.clientKeyData || t.clientKeyPath)) {
    throw new Error('TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH must be set together (mTLS client certificate and key)');
  }
  const cert = t.clientCertData ? Buffer.from(t.clientCertData) : t.clientCertPath ? readFileSync(t.clientCertPath) : undefined;
  const key = t.clientKeyData ? Buffer.from(t.clientKeyData) : t.clientKeyPath ? readFileSync(t.clientKeyPath) : undefined;
  const ca = t.serverCaCertData ? Buffer.from(t.serverCaCertData) : t.serverCaCertPath ? readFileSync(t.serverCaCertPath) : undefined;
  // As the SDKs' envconfig: TLS when asked for, or when certificates or an API key are given, unless disabled.
  const wantsTls = t.disabled === false || Boolean(cert || ca || t.serverName || p.apiKey);
  if (wantsTls && t.disabled !== true) {
    connection.tls = { serverNameOverride: t.serverName, serverRootCACertificate: ca, clientCertPair: cert && key ? { crt: cert, key } : undefined };
  }
  if (p.apiKey) {
    connection.apiKey = p.apiKey;
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
