// A Temporal client from the same settings the worker uses.
import { Client, Connection } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { temporalSettings, type TemporalSettings } from '../shared/temporal.js';

/** connectTimeout: how long to try before giving up (the SDK's default is 10 s). */
export async function connectClient(settings: TemporalSettings = temporalSettings(), opts: { connectTimeout?: Duration } = {}): Promise<Client> {
  const connection = await Connection.connect({ ...settings.connection, ...opts });
  return new Client({ connection, namespace: settings.namespace });
}
