// The CLI's entry: parse (no I/O, no client libraries loaded), then run the command with
// connections made on demand; every failure ends as one line on stderr (a usage error's names
// where --help shows the usage).
// Exit codes: 0 done, 1 failed or refused, 2 bad command line.
import { parseCommand, usage, usageHint, type Command } from './args.js';
import type { Io } from './drain.js';
import { UsageError } from './errors.js';

const PREFIX = 'slipway: ';

export async function run(argv: string[], io: Io = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommand(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${PREFIX}${err.message} ${usageHint(err.command)}`);
    return 2;
  }
  if (cmd.cmd === 'help') {
    io.out(usage(cmd.topic));
    return 0;
  }
  const [{ temporalSettings }, { Session }, { execute }, { oneLine }] = await Promise.all([
    import('../../shared/temporal.js'),
    import('./session.js'),
    import('./commands.js'),
    import('./explain.js'),
  ]);
  let session: InstanceType<typeof Session>;
  try {
    session = new Session(temporalSettings());
  } catch (err) {
    io.err(`${PREFIX}Temporal settings: ${oneLine(err, { temporalAddress: process.env.TEMPORAL_ADDRESS ?? '?', temporalNamespace: '?' })}`);
    return 1;
  }
  try {
    return await execute(session, cmd, io);
  } catch (err) {
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
