// The CLI's entry: parse (no I/O, no client libraries loaded), then run the command with
// connections made on demand; every failure ends as one line on stderr (a usage error's names
// where --help shows the usage). With -o json|yaml, stdout is one document (starter/cli/output.ts).
// Exit codes: 0 done, 1 failed or refused, 2 bad command line.
import { parseCommandLine, type Command, type Globals } from './args.js';
import type { Io } from './drain.js';
import { UsageError } from './errors.js';
import { completion, usage, usageHint } from './help.js';
import type { CliDocument } from './output.js';

const PREFIX = 'slipway: ';

export async function run(argv: string[], io: Io = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  let cmd: Command;
  let globals: Globals;
  try {
    ({ cmd, globals } = parseCommandLine(argv));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${PREFIX}${err.message} ${usageHint(err.command)}`);
    return 2;
  }
  if (globals.logLevel) process.env.SLIPWAY_LOG_LEVEL = globals.logLevel;
  if (cmd.cmd === 'help') {
    io.out(usage(cmd.topic));
    return 0;
  }
  if (cmd.cmd === 'completion') {
    io.out(completion(cmd.shell));
    return 0;
  }
  const [{ logTo, logger }, { temporalSettings }, { Session }, { execute }, { oneLine }, { renderDocument }, { temporalFields }] = await Promise.all([
    import('../../shared/log.js'),
    import('../../shared/temporal.js'),
    import('./session.js'),
    import('./commands.js'),
    import('./explain.js'),
    import('./output.js'),
    import('./debug.js'),
  ]);
  // Debug lines go to stderr: stdout is the command's output (with -o, one document).
  logTo(2);
  const log = logger('cli');
  let session: InstanceType<typeof Session>;
  try {
    session = new Session(temporalSettings(process.env, { address: globals.temporalAddress, namespace: globals.temporalNamespace }), process.env, globals, log);
    log.debug({ command: cmd.cmd, ...temporalFields(session.settings) }, 'temporal settings');
  } catch (err) {
    log.debug({ err }, 'temporal settings');
    io.err(`${PREFIX}Temporal settings: ${oneLine(err, { temporalAddress: globals.temporalAddress ?? process.env.TEMPORAL_ADDRESS ?? '?', temporalNamespace: '?' })}`);
    return 1;
  }
  // -o: text lines are dropped; the command hands over its one document.
  let document: CliDocument | undefined;
  const cmdIo: Io = globals.output ? { out: () => {}, err: io.err, doc: (d) => (document = d) } : io;
  try {
    const code = await execute(session, cmd, cmdIo);
    if (globals.output && document) io.out(renderDocument(document, globals.output));
    return code;
  } catch (err) {
    session.failed(`${cmd.cmd} failed`, err);
    if (err instanceof UsageError) {
      io.err(`${PREFIX}${oneLine(err, session.ctx)} ${usageHint(err.command)}`);
      return 2;
    }
    io.err(`${PREFIX}${oneLine(err, session.ctx)}`);
    return 1;
  } finally {
    await session.close();
  }
}
