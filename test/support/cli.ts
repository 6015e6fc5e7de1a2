// The compiled CLI run as a user runs it (a child process), and what its errors must look like:
// exit 1 with one line for a runtime error, exit 2 with one line (the mistake and where --help
// shows the usage) for a bad command line, never a stack trace.
import { execFile } from 'node:child_process';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The CLI under test: the build globalSetup makes (SLIPWAY_TEST_CLI runs these tests against another). */
const CLI = process.env.SLIPWAY_TEST_CLI ?? 'dist/starter/cli.js';

/** Runs the compiled CLI without blocking this process's worker. */
export function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 90_000): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile('node', [CLI, ...args], { env: { ...process.env, ...env }, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');

/** A runtime error: exit 1, exactly one line on stderr, no stack trace. */
export function expectOneLineError(r: Run, ...mentions: string[]): void {
  expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({ code: 1, stderr: [expect.stringMatching(/^slipway: /)] });
  for (const m of mentions) expect(r.stderr).toContain(m);
}

/** A usage error: exit 2, one line saying what was wrong and where --help shows the usage. */
export function expectUsageError(r: Run, mention: string): void {
  expect(r.code).toBe(2);
  expect(lines(r.stderr)).toEqual([expect.stringMatching(/^slipway: .*\(slipway (\S+ )?--help (shows its usage|lists the commands)\)$/)]);
  expect(r.stderr).toContain(mention);
  expect(r.stdout).toBe('');
}

