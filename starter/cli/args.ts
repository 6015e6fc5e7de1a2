// The command line, parsed and checked before anything connects: per-command option specs for
// node:util's parseArgs (strict: unknown options and missing values are errors), then the values.
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';
import { selectorError } from './selector.js';
import { STAGES as MAINTENANCE_STAGES } from '../../workflows/maintenance/types.js';
import { isDnsLabel, isDnsSubdomain, maintenanceName, nodeName, parseRef, podRef, REF_FORMS, type Ref } from './refs.js';
import { MAX_MAINTENANCE_REASON } from '../../api/names.js';

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder of the value in help. */
  arg?: string;
  help: string;
}

export interface CommandSpec {
  /** Positional arguments; a trailing '?' marks an optional one. */
  args: string[];
  summary: string;
  options: Record<string, OptionSpec>;
  /** Printed under the command's own help. */
  notes?: string;
  /** Command lines shown under Examples (without the program name). */
  examples?: string[];
}

export type { OptionSpec };

/** Accepted anywhere on the line, before or after the command, as kubectl's. */
export const GLOBAL_OPTIONS = {
  kubeconfig: { type: 'string', arg: 'file', help: 'kubeconfig file (default: KUBECONFIG, else ~/.kube/config)' },
  context: { type: 'string', arg: 'name', help: 'kubeconfig context (default: its current-context)' },
  namespace: { type: 'string', short: 'n', arg: 'namespace', help: "namespace of a namespaced object: cycle's request (default: the NodeGroup's requestNamespace, else default), cnr/<name>, a bare pod name" },
  'temporal-address': { type: 'string', arg: 'host:port', help: 'Temporal frontend (default: TEMPORAL_ADDRESS, the temporal CLI profile, else 127.0.0.1:7233)' },
  'temporal-namespace': { type: 'string', arg: 'namespace', help: 'Temporal namespace (default: TEMPORAL_NAMESPACE, the profile, else default)' },
  output: { type: 'string', short: 'o', arg: 'json|yaml', help: 'status, inventory, maintenance plan, cycle --dry-run: one document instead of text' },
  'log-level': { type: 'string', arg: 'level', help: `log level of the clients (${'debug, info, warn, error'}; sets SLIPWAY_LOG_LEVEL)` },
  debug: { type: 'boolean', short: 'v', help: 'same as --log-level debug' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} satisfies Record<string, OptionSpec>;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const OUTPUTS = ['json', 'yaml'] as const;

/** What the global flags said (undefined: not given). */
export interface Globals {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  temporalAddress?: string;
  temporalNamespace?: string;
  output?: (typeof OUTPUTS)[number];
  logLevel?: (typeof LOG_LEVELS)[number];
}

const reason: OptionSpec = { type: 'string', arg: 'text', help: 'recorded in the drain status and in the Event on the pod' };
const nodeOpt: OptionSpec = { type: 'string', arg: 'node', help: 'with a request: the node whose drain to address' };

const REF_NOTE = `<ref> is ${REF_FORMS}.`;

export const COMMANDS = {
  cycle: {
    args: ['<node-group>'],
    summary: 'create a CycleNodeRequest (from the NodeGroup of that name, if there is one) and follow it live',
    options: {
      name: { type: 'string', arg: 'name', help: 'name of the request (default: <node-group>-<time>)' },
      nodes: { type: 'string', arg: 'a,b', help: 'cycle only these nodes of the group' },
      concurrency: { type: 'string', arg: 'N', help: 'nodes in flight at once (a positive integer)' },
      method: { type: 'string', arg: 'Drain|Wait', help: 'Drain (default) or Wait for do-not-disrupt pods first' },
      provider: { type: 'string', arg: 'kwok|aws', help: 'node provider (default: SLIPWAY_PROVIDER)' },
      'dry-run': { type: 'boolean', help: 'show the batches it would run; creates nothing' },
      'no-follow': { type: 'boolean', help: 'create the request and return' },
    },
    examples: ['cycle workers --concurrency 2 --dry-run', 'cycle workers --dry-run -o json', 'cycle workers -n team-a --nodes node-1,node-2'],
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
    examples: ['status team-a/workers-1', 'status -n team-a cnr/workers-1 -o yaml', 'status node-1', 'status nm/kernel-5-15 -o json'],
  },
  drain: {
    args: ['<node>'],
    summary: 'drain a node (workflow drain/<node>) and follow it',
    options: {
      again: { type: 'boolean', help: 'drain again a node whose drain has already finished' },
      'no-follow': { type: 'boolean', help: 'start the drain and return' },
    },
    examples: ['drain node-1', 'drain node-1 --again --no-follow'],
  },
  inventory: {
    args: [],
    summary: 'nodes per node group, via a workflow',
    options: { selector: { type: 'string', arg: 'label selector', help: 'only nodes matching this label selector' } },
    examples: ['inventory', "inventory --selector 'topology.kubernetes.io/zone in (eu-1a)' -o json"],
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
    args: ['<name>', '<action>', '<stage|node>?'],
    summary: 'a NodeMaintenance: "<name> status", "<name> plan" (what Drain would do), "<name> stage <Stage>" to advance it; with spec.rollout "<name> done <node>", "<name> pause", "<name> resume"',
    options: { reason: { type: 'string', arg: 'text', help: 'with stage: why (written to spec.reason; the StageStarted Event names it)' } },
    examples: [
      'maintenance kernel-5-15 plan -o json',
      'maintenance kernel-5-15 stage Drain --reason "kernel update"',
      'maintenance kernel-5-15 done node-7',
      'maintenance kernel-5-15 pause',
    ],
    notes: [
      `<action> is status, plan, stage, done, pause or resume. plan: the preview computed while Idle (per node, entry and wave: pods; skipped, kept, PDB blockers). Stages go forward only: ${MAINTENANCE_STAGES.join(' → ')}.`,
      'With spec.rollout: done <node> says that node\'s work is done (it must be AwaitingWork; any completion method), pause takes no new node (nodes in progress go on), resume takes nodes again. Your identity is recorded with each.',
    ].join('\n'),
  },
  version: { args: [], summary: "the CLI's version; with the servers reachable, the worker's build and the API server's version", options: {}, examples: ['version', '--version -o json'] },
  completion: { args: ['<shell>'], summary: 'a shell completion script (bash, zsh or fish)', options: {}, examples: ['completion bash > /etc/bash_completion.d/slipway', 'completion zsh > "${fpath[1]}/_slipway"', 'completion fish > ~/.config/fish/completions/slipway.fish'] },
  setup: { args: ['<what>'], summary: "setup temporal: register Slipway's search attributes in the Temporal namespace (idempotent)", options: {}, examples: ['setup temporal', 'setup temporal --temporal-namespace prod'] },
  help: { args: ['<command>?'], summary: "this help, or one command's", options: {} },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;
/** What `maintenance <name>` does (also the completion's words). */
export const MAINTENANCE_ACTIONS = ['status', 'plan', 'stage', 'done', 'pause', 'resume'] as const;
export const isCommand = (s: string): s is CommandName => Object.hasOwn(COMMANDS, s);

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
  | { cmd: 'maintenance'; name: string; action: 'stage'; stage: string; reason?: string }
  | { cmd: 'maintenance'; name: string; action: 'done'; node: string }
  | { cmd: 'maintenance'; name: string; action: 'pause' }
  | { cmd: 'maintenance'; name: string; action: 'resume' }
  | { cmd: 'version' }
  | { cmd: 'completion'; shell: (typeof SHELLS)[number] }
  | { cmd: 'setup'; what: 'temporal' };

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** Where -o applies: one document of a stable shape (starter/cli/output.ts). */
const TAKES_OUTPUT = 'status, inventory, maintenance <name> plan, cycle --dry-run and version';

/** parseArgs' error, in one line and in our words. */
function argsError(err: unknown, name: CommandName): UsageError {
  const e = err as Error & { code?: string };
  const quoted = /'([^']+)'/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = [...Object.keys(COMMANDS[name].options), ...Object.keys(GLOBAL_OPTIONS)].find((k) => quoted?.startsWith('--') && editDistance(quoted.slice(2), k) <= 2);
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

function oneOf<T extends string>(v: string | undefined, allowed: readonly T[], opt: string, name: CommandName | undefined): T | undefined {
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`${opt} must be ${allowed.join(' or ')}, got "${v}"`, name);
  return v as T;
}

const GLOBAL_BY_FLAG = new Map<string, [string, OptionSpec]>(
  Object.entries(GLOBAL_OPTIONS as Record<string, OptionSpec>).flatMap(([k, o]) => [[`--${k}`, [k, o]], ...(o.short ? [[`-${o.short}`, [k, o]] as const] : [])] as [string, [string, OptionSpec]][]),
);

/** The command: the first argument that is neither a global flag nor a global flag's value. */
function findCommand(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return -1;
    if (!a.startsWith('-') || a === '-') return i;
    const g = GLOBAL_BY_FLAG.get(a.split('=')[0]!);
    if (a === '--version') continue;
    if (!g) throw new UsageError(`unknown option ${a.split('=')[0]} (a command's own options come after it)`);
    if (g[1].type === 'string' && !a.includes('=')) i++;
  }
  return -1;
}

/** Reads argv (without node and the script). Throws UsageError for anything malformed. */
export function parseCommand(argv: string[]): Command {
  return parseCommandLine(argv).cmd;
}

/** The command and the global flags, wherever they stand on the line. */
export function parseCommandLine(argv: string[]): { cmd: Command; globals: Globals } {
  const at = findCommand(argv);
  const first = at < 0 ? undefined : argv[at]!;
  const before = at < 0 ? argv : argv.slice(0, at);
  if (first === undefined) {
    if (before.includes('--version')) return { cmd: { cmd: 'version' }, globals: globals(parseGlobalsOnly(before.filter((a) => a !== '--version')), undefined) };
    if (before.includes('--help') || before.includes('-h')) return { cmd: { cmd: 'help' }, globals: {} };
    throw new UsageError('no command given');
  }
  if (!isCommand(first)) throw new UsageError(`unknown command "${first}"`);
  if (before.includes('--version')) throw new UsageError(`--version is a command of its own (slipway version)`);
  const name = first;
  const spec: CommandSpec = COMMANDS[name];
  const options = { ...GLOBAL_OPTIONS, ...spec.options } as Record<string, OptionSpec>;
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...before, ...argv.slice(at + 1)],
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(Object.entries(options).map(([k, o]) => [k, { type: o.type, ...(o.short ? { short: o.short } : {}) }])),
    }) as typeof parsed;
  } catch (err) {
    throw argsError(err, name);
  }
  const g = globals(parsed.values, name);
  const cmd = commandOf(name, spec, parsed, g);
  if (g.output && !takesOutput(cmd)) throw new UsageError(`-o goes with ${TAKES_OUTPUT}`, name);
  return { cmd, globals: g };
}

function takesOutput(c: Command): boolean {
  return c.cmd === 'status' || c.cmd === 'inventory' || c.cmd === 'version' || c.cmd === 'help' || (c.cmd === 'maintenance' && c.action === 'plan') || (c.cmd === 'cycle' && c.dryRun);
}

function parseGlobalsOnly(args: string[]): Record<string, string | boolean | undefined> {
  try {
    const opts = Object.fromEntries(Object.entries(GLOBAL_OPTIONS as Record<string, OptionSpec>).map(([k, o]) => [k, { type: o.type, ...(o.short ? { short: o.short } : {}) }]));
    return parseArgs({ args, strict: true, allowPositionals: false, options: opts }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    throw argsError(err, 'version');
  }
}

function globals(v: Record<string, string | boolean | undefined>, name: CommandName | undefined): Globals {
  const str = (k: string) => v[k] as string | undefined;
  const namespace = str('namespace');
  if (namespace !== undefined && !isDnsLabel(namespace)) throw new UsageError(`"${namespace}" is not a valid namespace`, name);
  const logLevel = v.debug === true ? 'debug' : oneOf(str('log-level'), LOG_LEVELS, '--log-level', name);
  for (const k of ['kubeconfig', 'context', 'temporal-address', 'temporal-namespace']) if (str(k) === '') throw new UsageError(`--${k} must not be empty`, name);
  return {
    kubeconfig: str('kubeconfig'),
    context: str('context'),
    namespace,
    temporalAddress: str('temporal-address'),
    temporalNamespace: str('temporal-namespace'),
    output: oneOf(str('output'), OUTPUTS, '-o', name),
    logLevel,
  };
}

function commandOf(name: CommandName, spec: CommandSpec, parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }, g: Globals): Command {
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
      const namespace = g.namespace ?? 'default';
      const reqName = str('name');
      if (reqName !== undefined && !isDnsSubdomain(reqName)) throw new UsageError(`"${reqName}" is not a valid request name`, name);
      const nodes = str('nodes')?.split(',').map((n) => nodeName(n.trim(), 'node name in --nodes'));
      const conc = str('concurrency');
      return {
        cmd: 'cycle',
        nodeGroup: pos[0]!,
        namespace,
        namespaceSet: g.namespace !== undefined,
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
      return { cmd: 'follow', ref: withCommand(name, () => parseRef(pos[0]!, g.namespace)) };
    case 'status':
      return { cmd: 'status', ref: withCommand(name, () => parseRef(pos[0]!, g.namespace)) };
    case 'version':
      return { cmd: 'version' };
    case 'completion':
      return { cmd: 'completion', shell: oneOf(pos[0], SHELLS, '<shell>', name)! };
    case 'setup':
      if (pos[0] !== 'temporal') throw new UsageError(`unknown setup "${pos[0]}" (setup temporal)`, name);
      return { cmd: 'setup', what: 'temporal' };
    case 'drain':
      return { cmd: 'drain', node: withCommand(name, () => nodeName(pos[0]!)), again: bool('again'), follow: !bool('no-follow') };
    case 'inventory':
    {
      const selector = str('selector');
      const wrong = selector === undefined ? undefined : selectorError(selector);
      if (wrong) throw new UsageError(`invalid --selector "${selector}": ${wrong}`, name);
      return { cmd: 'inventory', selector };
    }
    case 'skip-pod':
    case 'force-delete-pod':
      return withCommand(name, () => ({
        cmd: name,
        ref: parseRef(pos[0]!, g.namespace),
        pod: podRef(pos[1]!, g.namespace),
        reason: str('reason'),
        node: str('node') === undefined ? undefined : nodeName(str('node')!),
      }));
    case 'retry-now':
      return withCommand(name, () => ({ cmd: 'retry-now', ref: parseRef(pos[0]!, g.namespace), node: str('node') === undefined ? undefined : nodeName(str('node')!) }));
    case 'maintenance': {
      const nmName = withCommand(name, () => maintenanceName(pos[0]!));
      const action = pos[1]!;
      const noReason = () => {
        if (str('reason') !== undefined) throw new UsageError(`--reason goes with stage, not ${action}`, name);
      };
      if (action === 'status' || action === 'plan' || action === 'pause' || action === 'resume') {
        if (pos[2] !== undefined) throw new UsageError(`unexpected argument "${pos[2]}" for maintenance ${nmName} ${action}`, name);
        noReason();
        return { cmd: 'maintenance', name: nmName, action };
      }
      if (action === 'done') {
        if (pos[2] === undefined) throw new UsageError(`maintenance ${nmName} done needs <node> (a node of the maintenance whose work is done)`, name);
        noReason();
        return { cmd: 'maintenance', name: nmName, action, node: withCommand(name, () => nodeName(pos[2]!)) };
      }
      if (action !== 'stage') throw new UsageError(`unknown action "${action}" for maintenance (${MAINTENANCE_ACTIONS.join(', ')})`, name);
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
