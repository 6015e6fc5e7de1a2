// Help as kubectl prints it (Usage, Available Commands, Flags, Examples), the usage hint that ends a
// usage error, and shell completion scripts: all from the command specs in args.ts, no I/O.
import { COMMANDS, GLOBAL_OPTIONS, isCommand, SHELLS, type CommandName, type CommandSpec, type OptionSpec } from './args.js';
import { REF_FORMS } from './refs.js';

/** `slipway`, or `kubectl slipway` when run as the kubectl plugin (kubectl-slipway on PATH). */
export const PROGRAM = /(^|[/\\])kubectl-slipway(\.js)?$/.test(process.argv[1] ?? '') ? 'kubectl slipway' : 'slipway';

const flagRows = (options: Record<string, OptionSpec>) =>
  Object.entries(options).map(([k, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${k}${o.type === 'string' ? ` <${o.arg}>` : ''}`;
    return `  ${flag.padEnd(36)} ${o.help}`;
  });

function synopsis(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  const args = spec.args.map((a) => (a.endsWith('?') ? `[${a.slice(0, -1)}]` : a));
  return [PROGRAM, name, ...args, '[flags]'].join(' ');
}

const TOP_EXAMPLES = ['cycle workers --concurrency 2', 'status node-1 -o json', 'inventory --context prod', 'maintenance kernel-5-15 plan'];

/** Usage of every command, or one command's with its flags and examples. */
export function usage(name?: CommandName): string {
  if (!name) {
    const rows = (Object.keys(COMMANDS) as CommandName[]).map((c) => `  ${c.padEnd(17)} ${COMMANDS[c].summary}`);
    return [
      'Slipway cycles and maintains Kubernetes nodes as Temporal workflows.',
      '',
      'Usage:',
      `  ${PROGRAM} <command> [arguments] [flags]`,
      '',
      'Available Commands:',
      ...rows,
      '',
      'Flags (any command, anywhere on the line):',
      ...flagRows(GLOBAL_OPTIONS),
      `      --version${' '.repeat(27)} the CLI's version (as the version command)`,
      '',
      'Examples:',
      ...TOP_EXAMPLES.map((e) => `  ${PROGRAM} ${e}`),
      '',
      `<ref> is ${REF_FORMS}.`,
      'Exit status: 0 done, 1 failed or refused (one line on stderr says why), 2 bad command line.',
      `Use "${PROGRAM} <command> --help" for more information about a command.`,
    ].join('\n');
  }
  const spec: CommandSpec = COMMANDS[name];
  const own = flagRows(spec.options);
  return [
    spec.summary,
    ...(spec.notes ? ['', spec.notes] : []),
    '',
    'Usage:',
    `  ${synopsis(name)}`,
    ...(spec.examples?.length ? ['', 'Examples:', ...spec.examples.map((e) => `  ${PROGRAM} ${e}`)] : []),
    ...(own.length ? ['', 'Flags:', ...own] : []),
    '',
    'Global Flags:',
    ...flagRows(GLOBAL_OPTIONS),
  ].join('\n');
}

/** The hint that ends a usage error's one line (where the usage is shown). */
export function usageHint(name?: string): string {
  return name && isCommand(name) ? `(${PROGRAM} ${name} --help shows its usage)` : `(${PROGRAM} --help lists the commands)`;
}

const flagsOf = (name?: CommandName) => [...Object.keys(GLOBAL_OPTIONS), ...Object.keys(name ? COMMANDS[name].options : {})].map((k) => `--${k}`);

/** What a completion offers after a command's name: its fixed words (shells, actions, stages). */
const WORDS: Partial<Record<CommandName, string>> = { completion: SHELLS.join(' '), setup: 'temporal', help: Object.keys(COMMANDS).join(' ') };

/** A completion script for the shell: commands, then each command's flags and fixed words. */
export function completion(shell: (typeof SHELLS)[number]): string {
  const names = Object.keys(COMMANDS) as CommandName[];
  if (shell === 'bash') {
    const cases = names.map((c) => `    ${c}) words="${[...flagsOf(c), ...(WORDS[c] ?? '').split(' ').filter(Boolean)].join(' ')}" ;;`);
    return [
      '# bash completion for slipway (and kubectl-slipway)',
      '_slipway() {',
      '  local cur=${COMP_WORDS[COMP_CWORD]} cmd="" w words',
      '  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do case $w in -*) ;; *) cmd=$w; break ;; esac; done',
      '  case $cmd in',
      `    "") words="${[...names, ...flagsOf()].join(' ')}" ;;`,
      ...cases,
      '  esac',
      '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
      '}',
      'complete -F _slipway slipway kubectl-slipway',
    ].join('\n');
  }
  if (shell === 'zsh') {
    const cases = names.map((c) => `    ${c}) compadd -- ${[...flagsOf(c), ...(WORDS[c] ?? '').split(' ').filter(Boolean)].join(' ')} ;;`);
    return [
      '#compdef slipway kubectl-slipway',
      '_slipway() {',
      '  local cmd=${words[2]}',
      '  if (( CURRENT == 2 )); then',
      `    compadd -- ${[...names, ...flagsOf()].join(' ')}`,
      '    return',
      '  fi',
      '  case $cmd in',
      ...cases,
      '  esac',
      '}',
      'compdef _slipway slipway kubectl-slipway',
    ].join('\n');
  }
  const lines = ['# fish completion for slipway', 'complete -c slipway -f'];
  for (const c of names) lines.push(`complete -c slipway -n __fish_use_subcommand -a ${c} -d ${JSON.stringify(COMMANDS[c].summary.slice(0, 60))}`);
  for (const [k, o] of Object.entries(GLOBAL_OPTIONS as Record<string, OptionSpec>)) lines.push(`complete -c slipway -l ${k}${o.short ? ` -s ${o.short}` : ''}${o.type === 'string' ? ' -r' : ''} -d ${JSON.stringify(o.help.slice(0, 60))}`);
  for (const c of names) {
    for (const [k, o] of Object.entries(COMMANDS[c].options as Record<string, OptionSpec>)) lines.push(`complete -c slipway -n "__fish_seen_subcommand_from ${c}" -l ${k}${o.type === 'string' ? ' -r' : ''}`);
    if (WORDS[c]) lines.push(`complete -c slipway -n "__fish_seen_subcommand_from ${c}" -a "${WORDS[c]}"`);
  }
  return lines.join('\n');
}
