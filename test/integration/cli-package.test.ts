// #25.1 the CLI as a real command, installed as a user installs it: `npm pack`, the tarball into an
// empty prefix (dependencies from the registry), then `slipway` and `kubectl slipway` from that
// prefix's bin, run from an empty directory: nothing of the checkout is needed. Against the stack:
// `version` names the API server's and Temporal's versions; `setup temporal` registers the search
// attributes (and again is fine).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import Long from 'long';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'slipway-pack-'));
const prefix = join(dir, 'prefix');
const empty = mkdtempSync(join(tmpdir(), 'slipway-cwd-'));
/** Only the prefix's bin, node's and kubectl's directories. */
const PATH = [join(prefix, 'bin'), join(process.execPath, '..'), '/usr/local/bin', '/usr/bin', '/bin'].join(':');

function sh(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'NODE_PATH')) as Record<string, string>;
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: empty, env: { ...base, PATH, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

beforeAll(() => {
  // globalSetup has built dist/; the tarball holds what package.json's files name.
  const tgz = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { encoding: 'utf8' }).trim().split('\n').pop()!;
  execFileSync('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', join(dir, tgz)], { stdio: ['ignore', 'ignore', 'inherit'], cwd: empty });
}, 600_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

describe('#25.1 the packed CLI', () => {
  test('slipway --help, slipway version and kubectl slipway --help run from the installed prefix', async () => {
    const help = await sh('slipway', ['--help']);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage:\n  slipway <command>');
    expect(help.stdout).toContain('Available Commands:');

    const plugin = await sh('kubectl', ['slipway', '--help']);
    expect({ code: plugin.code, stderr: plugin.stderr }).toEqual({ code: 0, stderr: '' });
    expect(plugin.stdout).toContain('Usage:\n  kubectl slipway <command>');

    const version = await sh('slipway', ['version', '--temporal-address', '127.0.0.1:1', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(version.code).toBe(0);
    const pkg = JSON.parse(execFileSync('npm', ['pkg', 'get', 'version'], { encoding: 'utf8' })) as string;
    expect(version.stdout).toContain(`slipway ${pkg} (Node.js `);
    expect(version.stdout).toMatch(/Temporal: unreachable .*127\.0\.0\.1:1/);
  }, 120_000);

  test('version -o json with the servers reachable: the API server\'s version and Temporal\'s', async () => {
    const r = await sh('kubectl', ['slipway', '--version', '-o', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const d = JSON.parse(r.stdout) as { apiVersion: string; kind: string; cli: { version: string }; apiServer: { gitVersion: string }; temporal: { serverVersion: string }; worker: { taskQueue: string; pollers: string[] } };
    expect(d).toMatchObject({ apiVersion: 'cli.slipway.dev/v1', kind: 'Version', cli: { version: expect.any(String) }, apiServer: { gitVersion: expect.stringMatching(/^v1\./) }, temporal: { serverVersion: expect.stringMatching(/^\d+\./) } });
    expect(Array.isArray(d.worker.pollers)).toBe(true);
  }, 60_000);

  test('setup temporal registers the search attributes in a namespace that has none, and again is fine', async () => {
    const ns = uniqueName('it-setup');
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
    try {
      await connection.workflowService.registerNamespace({ namespace: ns, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(86_400) } });
      const first = await waitFor('the new namespace to be usable', async () => {
        const r = await sh('slipway', ['setup', 'temporal', '--temporal-namespace', ns]);
        return r.code === 0 ? r : undefined;
      }, { timeoutMs: 60_000 });
      for (const a of ALL_SEARCH_ATTRIBUTES) expect(first.stdout).toContain(`search attribute ${a.name} (${a.type}): registered in namespace ${ns}`);
      const have = await connection.operatorService.listSearchAttributes({ namespace: ns });
      for (const a of ALL_SEARCH_ATTRIBUTES) expect(Object.keys(have.customAttributes ?? {})).toContain(a.name);
      const again = await sh('slipway', ['setup', 'temporal', '--temporal-namespace', ns]);
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
      for (const a of ALL_SEARCH_ATTRIBUTES) expect(again.stdout).toContain(`search attribute ${a.name} (${a.type}): already registered in namespace ${ns}`);
    } finally {
      await connection.close();
    }
  }, 120_000);
});
