// The Temporal SDK's logger (its own lines, workflow and activity loggers) routed into Slipway's:
// one format and level for everything the worker prints.
import type { LogLevel, LogMetadata } from '@temporalio/common';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { Logger } from '../shared/log.js';

const TO_PINO = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** The SDK's level for a pino level (the SDK has nothing above ERROR, and no "off"). */
export function sdkLevel(level: string): LogLevel {
  const found = (Object.keys(TO_PINO) as LogLevel[]).find((k) => TO_PINO[k] === level);
  return found ?? 'ERROR';
}

/** Fields for one SDK entry: workflowId stays, Temporal's namespace is not a Kubernetes one. */
export function sdkFields(meta: LogMetadata = {}): Record<string, unknown> {
  const { namespace, error, ...rest } = meta as Record<string, unknown>;
  return { ...rest, ...(namespace !== undefined ? { temporalNamespace: namespace } : {}), ...(error !== undefined ? { err: error } : {}) };
}

export function temporalLogger(l: Logger): DefaultLogger {
  return new DefaultLogger(sdkLevel(l.level), (entry: LogEntry) => l[TO_PINO[entry.level]](sdkFields(entry.meta), entry.message));
}
