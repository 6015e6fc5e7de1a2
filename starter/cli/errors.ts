// The CLI's two kinds of error. Light on purpose: parsing and --help load no client library.

/** The command line itself is wrong (exit 2, with a usage hint). */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage to hint at. */
    readonly command?: string,
  ) {
    super(message);
  }
}

/** Something the command needs is missing or refused (exit 1). */
export class CliError extends Error {}
