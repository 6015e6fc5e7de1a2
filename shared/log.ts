// The one logger of Slipway's processes (worker, bridge, the CLI's debug mode): pino, one JSON
// object per line on stdout (the CLI: stderr, see logTo); short text lines instead when that
// stream is a terminal. The level comes
// from SLIPWAY_LOG_LEVEL (the CLI's --log-level sets it), read when the first logger is made.
// Every line carries what it is about as fields: component, and kind/namespace/name, node,
// workflowId where they apply. Node-only: workflow code logs through the SDK's workflow logger.
import { pino, type Level, type Logger } from 'pino';

export type { Logger } from 'pino';

/** What a line is about, and anything else worth a field. */
export interface LogFields {
  component?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  node?: string;
  workflowId?: string;
  /** The line's level when not info. */
  level?: 'debug' | 'info' | 'warn' | 'error';
  [field: string]: unknown;
}

/** One log line: a message and what it is about. A plain `(msg) => void` is one too (tests collect lines). */
export type Log = (msg: string, fields?: LogFields) => void;

const LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** SLIPWAY_LOG_LEVEL, lower-cased; info when unset or unknown. */
export function logLevelFromEnv(env: Record<string, string | undefined> = process.env): Level | 'silent' {
  const want = (env.SLIPWAY_LOG_LEVEL ?? '').trim().toLowerCase();
  return (LEVELS.includes(want) ? want : 'info') as Level | 'silent';
}

let root: Logger | undefined;
let dest: 1 | 2 = 1;

/**
 * Where the lines go: 1 stdout (the worker's and bridge's default), 2 stderr (the CLI, whose stdout
 * is its output). Only before the first logger is made.
 */
export function logTo(fd: 1 | 2): void {
  if (root && fd !== dest) throw new Error('logTo after the first logger was made');
  dest = fd;
}

/** The process's root logger (made on first use, so a flag parsed before that sets its level). */
export function rootLogger(): Logger {
  if (root) return root;
  const out = dest === 2 ? process.stderr : process.stdout;
  const stream = out.isTTY ? { write: (line: string) => void out.write(textLine(line)) } : pino.destination({ dest, sync: true });
  root = pino({ level: logLevelFromEnv(), base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, stream);
  const raw = process.env.SLIPWAY_LOG_LEVEL;
  if (raw && !LEVELS.includes(raw.trim().toLowerCase())) root.warn({ component: 'log' }, `SLIPWAY_LOG_LEVEL=${raw} is not a level (${LEVELS.join(', ')}); using info`);
  return root;
}

/** A logger for one component (worker, bridge, cli), its lines bound to `fields`. */
export function logger(component: string, fields: Omit<LogFields, 'level'> = {}): Logger {
  return rootLogger().child({ component, ...fields });
}

/** A Log writing to `l`: fields.level picks the level, the other fields go on the line. */
export function lineLog(l: Logger): Log {
  return (msg, fields) => {
    if (!fields) return l.info(msg);
    const { level = 'info', ...rest } = fields;
    l[level](rest, msg);
  };
}

/** kind, namespace and name from an object key ("namespace/name", or "/name" when cluster-scoped). */
export function objectFields(kind: string, key: string): LogFields {
  const slash = key.indexOf('/');
  if (slash < 0) return { kind, name: key };
  const namespace = key.slice(0, slash);
  return namespace ? { kind, namespace, name: key.slice(slash + 1) } : { kind, name: key.slice(slash + 1) };
}

const SHOWN_FIRST = ['kind', 'namespace', 'name', 'node', 'workflowId'];
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'component', ...SHOWN_FIRST]);

/** A JSON line as text for a terminal: time, level, component, what it is about, message, other fields. */
export function textLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof o.time === 'string' ? o.time.slice(11, 23) : '';
  const about = o.kind ? `${String(o.kind)} ${o.namespace ? `${String(o.namespace)}/` : ''}${String(o.name ?? '')}` : '';
  const parts = [time, String(o.level ?? '').toUpperCase().padEnd(5), o.component ? String(o.component) : '', about ? `[${about}]` : ''];
  if (o.node) parts.push(`node=${String(o.node)}`);
  if (o.workflowId) parts.push(`workflow=${String(o.workflowId)}`);
  parts.push(String(o.msg ?? ''));
  for (const [k, v] of Object.entries(o)) if (!HIDDEN.has(k)) parts.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `${parts.filter(Boolean).join(' ')}\n`;
}
