// #25.3 the CLI's debug mode: -v logs through the one logger, as JSON lines on stderr, so stdout
// (-o json) stays one document; at the default level nothing extra is printed. The built CLI runs
// as a process (the logger is made once per process), against servers that do not answer.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { workflowDebug } from '../../starter/cli/debug.js';

const root = join(import.meta.dirname, '../..');

describe('#25.3 the CLI\'s debug mode', () => {
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
    const dir = mkdtempSync(join(tmpdir(), 'slipway-cli-debug-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
        'users: [{name: someone, user: {token: secret-token-never-logged}}]',
        'contexts: [{name: nowhere-ctx, context: {cluster: nowhere, user: someone}}]',
        'current-context: nowhere-ctx',
      ].join('\n'),
    );
    env = { PATH: process.env.PATH, HOME: dir, TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_API_KEY: 'secret-key-never-logged', KUBECONFIG: kubeconfig };
  }, 300_000);

  const cli = (args: string[]) => spawnSync(process.execPath, [join(root, 'dist/starter/cli.js'), ...args], { env, encoding: 'utf8', timeout: 60_000 });
  const jsonLines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  test('#25.3 the CLI\'s debug mode: -v logs settings, calls and errors as JSON lines on stderr; stdout stays one document', () => {
    const r = cli(['-v', 'version', '-o', 'json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Version' });
    const lines = jsonLines(r.stderr);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.component === 'cli' && l.level === 'debug')).toBe(true);
    const text = JSON.stringify(lines);
    expect(text).toContain('127.0.0.1:1'); // the Temporal address
    expect(text).toContain('https://127.0.0.1:1'); // the kube server
    expect(text).toContain('nowhere-ctx');
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'kubernetes call', method: 'GET', url: 'https://127.0.0.1:1/version' }));
    expect(lines.some((l) => typeof l.err === 'object' && /\n\s+at /.test(String((l.err as { stack?: string }).stack)))).toBe(true); // an error with its stack
    expect(text).not.toContain('secret-key-never-logged');
    expect(text).not.toContain('secret-token-never-logged');
  });

  test('#25.3 the CLI\'s debug mode: without -v stderr has no debug lines', () => {
    const r = cli(['version', '-o', 'json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Version' });
    expect(jsonLines(r.stderr)).toEqual([]);
    expect(r.stderr).not.toMatch(/debug/i);
  });
});

test("#25.3 the CLI's debug mode: a workflow call's line names the workflow and the query; a failure carries its stack", async () => {
  const out: Record<string, unknown>[] = [];
  const i = workflowDebug(pino({ level: 'debug', base: undefined }, { write: (s: string) => void out.push(JSON.parse(s) as Record<string, unknown>) }));
  const input = { workflowExecution: { workflowId: 'drain/n1' }, queryType: 'status', args: [], headers: {}, queryRejectCondition: undefined };
  await expect(i.query!(input as never, () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
  expect(out[0]).toMatchObject({ msg: 'temporal query', workflowId: 'drain/n1', query: 'status' });
  expect(out[1]).toMatchObject({ msg: 'temporal query failed', workflowId: 'drain/n1', err: { message: 'gone' } });
  expect(String((out[1]!.err as { stack: string }).stack)).toMatch(/\n\s+at /);
});
