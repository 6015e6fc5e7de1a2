// A Temporal client from the same settings the worker uses.
import { Client, Connection } from '@temporalio/client';
import { temporalSettings, type TemporalSettings } from '../worker/config.js';

export async function connectClient(settings: TemporalSettings = temporalSettings()): Promise<Client> {
  const connection = await Connection.connect(settings.connection);
  return new Client({ connection, namespace: settings.namespace });
}
