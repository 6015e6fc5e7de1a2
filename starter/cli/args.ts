// The command line, parsed and checked before anything connects: per-command option specs for
// node:util's parseArgs (strict: unknown options and missing values are errors), then the values.
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';
import { MAX_MAINTENANCE_REASON } from '../../api/node-maintenance.js';
import { STAGES as MAINTENANCE_STAGES } from '../../workflows/maintenance/types.js';
import { isDnsLabel, isDnsSubdomain, maintenanceName, nodeName, parseRef, podRef, REF_FORMS, type Ref } from './refs.js';

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder of the value in help. */
  arg?: string;
  help: string;
}

interface CommandSpec {
  /** Positional arguments; a trailing '?' marks an optional one. */
  args: string[];
  summary: string;
  options: Record<string, OptionSpec>;
  /** Printed under the command's own help. */
  notes?: string;
}

const reason: OptionSpec = { type: 'string', arg: 'text', help: 'recorded in the drain status and in the Event on the pod' };
const nodeOpt: OptionSpec = { type: 'string', arg: 'node', help: 'with a request: the node whose drain to address' };

const REF_NOTE = `<ref> is ${REF_FORMS}.`;

export const COMMANDS = {
  cycle: {
    args: ['<node-group>'],
    summary: 'create a CycleNodeRequest (from the NodeGroup of that name, if there is one) and follow it live',
    options: {
      namespace: { type: 'string', short: 'n', arg: 'namespace', help: 'namespace of the request (default: the NodeGroup\'s requestNamespace, else default); must exist' },
      name: { type: 'string', arg: 'name', help: 'name of the request (default: <node-group>-<time>)' },
      nodes: { type: 'string', arg: 'a,b', help: 'cycle only these nodes of the group' },
      concurrency: { type: 'string', arg: 'N', help: 'nodes in flight at once (a positive integer)' },
      method: { type: 'string', arg: 'Drain|Wait', help: 'Drain (default) or Wait for do-not-disrupt pods first' },
      provider: { type: 'string', arg: 'kwok|aws', help: 'node provider (default: SLIPWAY_PROVIDER)' },
      'dry-run': { type: 'boolean', help: 'show the batches it would run; creates nothing' },
      'no-follow': { type: 'boolean', help: 'create the request and return' },
    },
  },
  follow: {
    args: ['<ref>'],
    summary: 'follow a cycle or a drain until it ends (exit 1 if it fails or leaves pods)',
    options: {},
    notes: REF_NOTE,
  },
  status: {
    args: ['<ref>'],
    summary: 'what a cycle or a drain is doing, what blocks it, and its drain IDs',
    options: {},
    notes: REF_NOTE,
  },
  drain: {
    args: ['<node>'],
    summary: 'drain a node (workflow drain/<node>) and follow it',
    options: {
      again: { type: 'boolean', help: 'drain again a node whose drain has already finished' },
      'no-follow': { type: 'boolean', help: 'start the drain and return' },
    },
  },
  inventory: {
    args: [],
    summary: 'nodes per node group, via a workflow',
    options: { selector: { type: 'string', arg: 'label selector', help: 'only nodes matching this label selector' } },
  },
  'skip-pod': {
    args: ['<ref>', '<namespace>/<pod>'],
    summary: 'leave a pod on the node: the drain stops waiting for it',
    options: { reason, node: nodeOpt },
    notes: REF_NOTE,
  },
  'force-delete-pod': {
    args: ['<ref>', '<namespace>/<pod>'],
    summary: 'delete a pod now with grace period 0, bypassing its PDB',
    options: { reason, node: nodeOpt },
    notes: REF_NOTE,
  },
  'retry-now': {
    args: ['<ref>'],
    summary: 'retry refused evictions now instead of after their backoff',
    options: { node: nodeOpt },
    notes: REF_NOTE,
  },
  maintenance: {
    args: ['<name>', '<action>', '<stage>?'],
    summary: 'a NodeMaintenance: "<name> status", "<name> plan" (what Drain would do), or "<name> stage <Stage>" to advance it',
    options: { reason: { type: 'string', arg: 'text', help: 'with stage: why (written to spec.reason; the StageStarted Event names it)' } },
    notes: `<action> is status, plan or stage. plan: the preview computed while Idle (per node, entry and wave: pods; skipped, kept, PDB blockers). Stages go forward only: ${MAINTENANCE_STAGES.join(' → ')}.`,
  },
  help: { args: ['<command>?'], summary: "this help, or one command's", options: {} },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;
const isCommand = (s: string): s is CommandName => Object.hasOwn(COMMANDS, s);

export type Command =
  | { cmd: 'help'; topic?: CommandName }
  | {
      cmd: 'cycle';
      /** A NodeGroup's name (its template is used), or a cloud node group's. */
      nodeGroup: string;
      namespace: string;
      /** -n given (a NodeGroup's request namespace applies otherwise). */
      namespaceSet: boolean;
      name?: string;
      nodes?: string[];
      concurrency?: number;
      method?: 'Drain' | 'Wait';
      provider?: 'kwok' | 'aws';
      dryRun: boolean;
      follow: boolean;
    }
  | { cmd: 'follow'; ref: Ref }
  | { cmd: 'status'; ref: Ref }
  | { cmd: 'drain'; node: string; again: boolean; follow: boolean }
  | { cmd: 'inventory'; selector?: string }
  | { cmd: 'skip-pod'; ref: Ref; pod: { namespace: string; name: string }; reason?: string; node?: string }
  | { cmd: 'force-delete-pod'; ref: Ref; pod: { namespace: string; name: string }; reason?: string; node?: string }
  | { cmd: 'retry-now'; ref: Ref; node?: string }
  | { cmd: 'maintenance'; name: string; action: 'status' }
  | { cmd: 'maintenance'; name: string; action: 'plan' }
  | { cmd: 'maintenance'; name: string; action: 'stage'; stage: string; reason?: string };

const PROGRAM = 'slipway';

function synopsis(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  const opts = Object.entries(spec.options).map(([k, o]) => `[${o.short ? `-${o.short}|` : ''}--${k}${o.type === 'string' ? ` <${o.arg}>` : ''}]`);
  const args = spec.args.map((a) => (a.endsWith('?') ? `[${a.slice(0, -1)}]` : a));
  return [PROGRAM, name, ...args, ...opts].join(' ');
}

/** Usage of every command, or one command's with its options. */
export function usage(name?: CommandName): string {
  if (!name) {
    const rows = (Object.keys(COMMANDS) as CommandName[]).map((c) => `  ${c.padEnd(17)} ${COMMANDS[c].summary}`);
    return [
      `usage: ${PROGRAM} <command> [arguments] [options]`,
      '',
      'commands:',
      ...rows,
      '',
      REF_NOTE,
      `${PROGRAM} <command> --help shows a command's arguments and options.`,
      'Exit status: 0 done, 1 failed or refused (one line on stderr says why), 2 bad command line.',
    ].join('\n');
  }
  const spec: CommandSpec = COMMANDS[name];
  const opts = Object.entries(spec.options).map(([k, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${k}${o.type === 'string' ? ` <${o.arg}>` : ''}`;
    return `  ${flag.padEnd(28)} ${o.help}`;
  });
  return [`usage: ${synopsis(name)}`, '', spec.summary, ...(spec.notes ? [spec.notes] : []), ...(opts.length ? ['', 'options:', ...opts] : [])].join('\n');
}

/** The hint that ends a usage error's one line (where the usage is shown). */
export function usageHint(name?: string): string {
  return name && isCommand(name) ? `(${PROGRAM} ${name} --help shows its usage)` : `(${PROGRAM} --help lists the commands)`;
}

/** parseArgs' error, in one line and in our words. */
function argsError(err: unknown, name: CommandName): UsageError {
  const e = err as Error & { code?: string };
  const quoted = /'([^']+)'/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = Object.keys(COMMANDS[name].options).find((k) => quoted?.startsWith('--') && editDistance(quoted.slice(2), k) <= 2);
      return new UsageError(`unknown option ${quoted ?? ''} for ${name}${near ? ` (did you mean --${near}?)` : ''}`, name);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const opt = /(--[\w-]+)/.exec(e.message)?.[1] ?? quoted;
      if (/argument missing/.test(e.message)) return new UsageError(`option ${opt} needs a value`, name);
      if (/ambiguous/.test(e.message)) return new UsageError(`option ${opt} needs a value (one that starts with '-' goes as ${opt}=<value>)`, name);
      return new UsageError(`option ${opt} takes no value`, name);
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`unexpected argument ${quoted ?? ''} for ${name}`, name);
    default:
      return new UsageError(e.message.split('\n')[0]!, name);
  }
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length]![b.length]!;
}

function positiveInt(v: string, opt: string, name: CommandName): number {
  if (!/^[1-9][0-9]*$/.test(v) || !Number.isSafeInteger(Number(v))) throw new UsageError(`${opt} must be a positive integer, got "${v}"`, name);
  return Number(v);
}

function oneOf<T extends string>(v: string | undefined, allowed: readonly T[], opt: string, name: CommandName): T | undefined {
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`${opt} must be ${allowed.join(' or ')}, got "${v}"`, name);
  return v as T;
}

/** Reads argv (without node and the script). Throws UsageError for anything malformed. */
export function parseCommand(argv: string[]): Command {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError('no command given');
  if (first === '--help' || first === '-h') return { cmd: 'help' };
  if (!isCommand(first)) {
    throw new UsageError(first.startsWith('-') ? `unknown option ${first} (options come after the command)` : `unknown command "${first}"`);
  }
  const name = first;
  const spec: CommandSpec = COMMANDS[name];
  const options = { ...spec.options, help: { type: 'boolean', short: 'h', help: '' } } as Record<string, OptionSpec>;
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(Object.entries(options).map(([k, o]) => [k, { type: o.type, ...(o.short ? { short: o.short } : {}) }])),
    }) as typeof parsed;
  } catch (err) {
    throw argsError(err, name);
  }
  const { values: v, positionals: pos } = parsed;
  if (v.help) return { cmd: 'help', topic: name === 'help' ? undefined : name };

  const required = spec.args.filter((a) => !a.endsWith('?'));
  if (pos.length < required.length) throw new UsageError(`${name} needs ${required.slice(pos.length).join(' ')}`, name);
  if (pos.length > spec.args.length) throw new UsageError(`unexpected argument "${pos[spec.args.length]}" for ${name}`, name);
  const str = (k: string) => v[k] as string | undefined;
  const bool = (k: string) => v[k] === true;

  switch (name) {
    case 'help': {
      const topic = pos[0];
      if (topic !== undefined && !isCommand(topic)) throw new UsageError(`unknown command "${topic}"`);
      return { cmd: 'help', topic: topic === 'help' ? undefined : (topic as CommandName | undefined) };
    }
    case 'cycle': {
      const namespace = str('namespace') ?? 'default';
      if (!isDnsLabel(namespace)) throw new UsageError(`"${namespace}" is not a valid namespace`, name);
      const reqName = str('name');
      if (reqName !== undefined && !isDnsSubdomain(reqName)) throw new UsageError(`"${reqName}" is not a valid request name`, name);
      const nodes = str('nodes')?.split(',').map((n) => nodeName(n.trim(), 'node name in --nodes'));
      const conc = str('concurrency');
      return {
        cmd: 'cycle',
        nodeGroup: pos[0]!,
        namespace,
        namespaceSet: str('namespace') !== undefined,
        name: reqName,
        nodes,
        concurrency: conc === undefined ? undefined : positiveInt(conc, '--concurrency', name),
        method: oneOf(str('method'), ['Drain', 'Wait'] as const, '--method', name),
        provider: oneOf(str('provider'), ['kwok', 'aws'] as const, '--provider', name),
        dryRun: bool('dry-run'),
        follow: !bool('no-follow'),
      };
    }
    case 'follow':
      return { cmd: 'follow', ref: withCommand(name, () => parseRef(pos[0]!)) };
    case 'status':
      return { cmd: 'status', ref: withCommand(name, () => parseRef(pos[0]!)) };
    case 'drain':
      return { cmd: 'drain', node: withCommand(name, () => nodeName(pos[0]!)), again: bool('again'), follow: !bool('no-follow') };
    case 'inventory':
      return { cmd: 'inventory', selector: str('selector') };
    case 'skip-pod':
    case 'force-delete-pod':
      return withCommand(name, () => ({
        cmd: name,
        ref: parseRef(pos[0]!),
        pod: podRef(pos[1]!),
        reason: str('reason'),
        node: str('node') === undefined ? undefined : nodeName(str('node')!),
      }));
    case 'retry-now':
      return withCommand(name, () => ({ cmd: 'retry-now', ref: parseRef(pos[0]!), node: str('node') === undefined ? undefined : nodeName(str('node')!) }));
    case 'maintenance': {
      const nmName = withCommand(name, () => maintenanceName(pos[0]!));
      const action = pos[1]!;
      if (action === 'status' || action === 'plan') {
        if (pos[2] !== undefined) throw new UsageError(`unexpected argument "${pos[2]}" for maintenance ${nmName} ${action}`, name);
        if (str('reason') !== undefined) throw new UsageError(`--reason goes with stage, not ${action}`, name);
        return { cmd: 'maintenance', name: nmName, action };
      }
      if (action !== 'stage') throw new UsageError(`unknown action "${action}" for maintenance (status, plan or stage)`, name);
      const stage = pos[2];
      if (stage === undefined) throw new UsageError(`maintenance ${nmName} stage needs <stage> (${MAINTENANCE_STAGES.join(', ')})`, name);
      if (!(MAINTENANCE_STAGES as readonly string[]).includes(stage)) throw new UsageError(`unknown stage ${stage}; one of ${MAINTENANCE_STAGES.join(', ')}`, name);
      const why = str('reason');
      if (why !== undefined && why.length > MAX_MAINTENANCE_REASON) throw new UsageError(`--reason is longer than ${MAX_MAINTENANCE_REASON} characters (it is written to spec.reason)`, name);
      return { cmd: 'maintenance', name: nmName, action, stage, reason: why };
    }
  }
}

/** Tags a usage error with the command, for the hint. */
function withCommand<T>(name: CommandName, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof UsageError && !err.command) throw new UsageError(err.message, name);
    throw err;
  }
}
