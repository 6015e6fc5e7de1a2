// A Temporal client from the same settings the worker uses.
import { hostname, userInfo } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { temporalSettings, type TemporalSettings } from '../shared/temporal.js';

/** connectTimeout: how long to try before giving up (the SDK's default is 10 s). */
export async function connectClient(settings: TemporalSettings = temporalSettings(), opts: { connectTimeout?: Duration } = {}): Promise<Client> {
  const connection = await Connection.connect({ ...settings.connection, ...opts });
  return new Client({ connection, namespace: settings.namespace, identity: callerIdentity() });
}

/**
 * Who is calling: SLIPWAY_IDENTITY, else user@host. Temporal records it with every start, signal and
 * update in the workflow's history; the CLI also puts it in the signals that force pods.
 */
export function callerIdentity(): string {
  if (process.env.SLIPWAY_IDENTITY) return process.env.SLIPWAY_IDENTITY;
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container with an arbitrary uid)
  }
  return `${user}@${hostname()}`;
}
