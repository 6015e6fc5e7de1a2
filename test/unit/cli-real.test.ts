// #25.1 the CLI as a real command: global flags anywhere, -o where it is documented, kubectl-style
// help, completion scripts a shell accepts, checks made before connecting, Temporal's own settings.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../../starter/cli/args.js';
import { completion, usage } from '../../starter/cli/help.js';
import { run } from '../../starter/cli/main.js';
import { temporalSettings } from '../../shared/temporal.js';

const nowhere = { TEMPORAL_ADDRESS: '127.0.0.1:1', KUBECONFIG: '/nonexistent/slipway-kubeconfig' };

async function runLine(argv: string[], env: Record<string, string> = nowhere) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const out: string[] = [];
  const err: string[] = [];
  try {
    const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err, logLevel: process.env.SLIPWAY_LOG_LEVEL };
  } finally {
    process.env = saved;
  }
}

describe('#25.1 global flags in any position, as kubectl', () => {
  test('before, between and after the command and its arguments', () => {
    const line = ['--context', 'prod', 'status', '-n', 'team-a', 'cnr/r1', '--temporal-address', 'tmp.example:7233', '--kubeconfig=/k', '--temporal-namespace', 'ops', '-o', 'json'];
    expect(parseCommandLine(line)).toEqual({
      cmd: { cmd: 'status', ref: { kind: 'request', namespace: 'team-a', name: 'r1' } },
      globals: { context: 'prod', kubeconfig: '/k', namespace: 'team-a', temporalAddress: 'tmp.example:7233', temporalNamespace: 'ops', output: 'json', logLevel: undefined },
    });
    expect(parseCommandLine(['-n', 'team-a', 'cycle', 'workers']).cmd).toMatchObject({ cmd: 'cycle', namespace: 'team-a', namespaceSet: true });
    expect(parseCommandLine(['skip-pod', 'node-1', 'web-0', '-n', 'shop']).cmd).toMatchObject({ pod: { namespace: 'shop', name: 'web-0' } });
    expect(parseCommandLine(['-v', 'inventory']).globals.logLevel).toBe('debug');
  });

  test('a command\'s own option before the command, a bad level, -o where it does not apply: one line, exit 2', async () => {
    for (const [argv, mention] of [
      [['--again', 'drain', 'n1'], 'unknown option --again'],
      [['--log-level', 'loud', 'inventory'], '--log-level must be debug or info or warn or error'],
      [['drain', 'n1', '-o', 'json'], '-o goes with status'],
      [['cycle', 'workers', '-o', 'json'], '-o goes with status'],
      [['status', 'n1', '-o', 'xml'], '-o must be json or yaml'],
      [['-n', 'Bad_NS', 'cycle', 'workers'], '"Bad_NS" is not a valid namespace'],
    ] as const) {
      const r = await runLine([...argv]);
      expect({ argv, code: r.code, lines: r.err.length, out: r.out }).toEqual({ argv, code: 2, lines: 1, out: [] });
      expect(r.err[0]).toContain(mention);
    }
  });

  test('--log-level and -v set SLIPWAY_LOG_LEVEL', async () => {
    expect((await runLine(['--log-level', 'warn', 'help'])).logLevel).toBe('warn');
    expect((await runLine(['help', '-v'])).logLevel).toBe('debug');
  });
});

describe('#25.1 checks the README promises before connecting', () => {
  test.each([["a in (b"], ['bad key!=x'], ['a=b,,'], ['x>y']])('inventory --selector %j: exit 2 naming the selector, no connection tried', async (sel) => {
    const r = await runLine(['inventory', '--selector', sel]);
    expect({ code: r.code, lines: r.err.length }).toEqual({ code: 2, lines: 1 });
    expect(r.err[0]).toContain(`invalid --selector "${sel}"`);
    expect(r.err[0]).not.toMatch(/kubeconfig|Temporal|reach/);
  });
});

describe('#25.1 kubectl-style help', () => {
  test('Usage, Available Commands, Flags, Examples', () => {
    const top = usage();
    for (const h of ['Usage:\n  slipway <command>', 'Available Commands:', 'Flags', 'Examples:\n  slipway ']) expect(top).toContain(h);
    for (const c of ['cycle', 'status', 'inventory', 'maintenance', 'version', 'completion', 'setup']) expect(top).toMatch(new RegExp(`^  ${c} `, 'm'));
    for (const c of ['cycle', 'status', 'inventory', 'maintenance', 'completion', 'setup', 'version'] as const) {
      expect(usage(c)).toMatch(/Usage:\n {2}slipway \S+.*\[flags\]/);
      expect(usage(c)).toContain('Examples:');
      expect(usage(c)).toContain('Global Flags:');
      expect(usage(c)).toContain('--temporal-address');
    }
  });
});

describe('#25.1 slipway completion bash|zsh|fish', () => {
  test('bash: the script completes commands and a command\'s flags', () => {
    const script = completion('bash');
    const complete = (words: string[]) =>
      execFileSync('bash', ['-c', `${script}\nCOMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; _slipway; echo "\${COMPREPLY[@]}"`]).toString().trim().split(' ');
    expect(complete(['slipway', 'cy'])).toEqual(['cycle']);
    expect(complete(['slipway', 'drain', '--ag'])).toEqual(['--again']);
    expect(complete(['slipway', 'completion', 'z'])).toEqual(['zsh']);
  });

  test.each(['bash', 'zsh', 'fish'])('%s: printed by the command, exit 0', async (shell) => {
    const r = await runLine(['completion', shell]);
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toContain(shell === 'zsh' ? '#compdef slipway' : 'complete ');
  });

  test('an unknown shell is a usage error', async () => {
    const r = await runLine(['completion', 'tcsh']);
    expect(r.code).toBe(2);
    expect(r.err[0]).toContain('<shell> must be bash or zsh or fish');
  });
});

describe("#25.1 Temporal's own client configuration", () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-envconfig-'));
  const file = join(dir, 'temporal.toml');
  writeFileSync(join(dir, 'ca.pem'), 'CA');
  writeFileSync(
    file,
    [
      '# a temporal CLI config',
      '[profile.default]',
      'address = "localhost:7233"',
      '',
      '[profile.prod]',
      "address = \"prod.tmprl.cloud:7233\" # the frontend",
      'namespace = "prod.acct"',
      'api_key = "k-123"',
      '[profile.prod.tls]',
      `server_ca_cert_path = "${join(dir, 'ca.pem')}"`,
      'server_name = "prod.internal"',
    ].join('\n'),
  );

  test('a profile from TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE: address, namespace, API key, TLS', () => {
    const s = temporalSettings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' });
    expect(s.address).toBe('prod.tmprl.cloud:7233');
    expect(s.namespace).toBe('prod.acct');
    expect(s.connection.apiKey).toBe('k-123');
    expect(s.connection.tls).toMatchObject({ serverNameOverride: 'prod.internal', serverRootCACertificate: Buffer.from('CA') });
  });

  test('the standard variables over the profile, the flags over both', () => {
    const env = { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', TEMPORAL_ADDRESS: 'env:7233', TEMPORAL_TLS: 'false' };
    const s = temporalSettings(env);
    expect({ address: s.address, namespace: s.namespace, tls: s.connection.tls }).toEqual({ address: 'env:7233', namespace: 'prod.acct', tls: undefined });
    expect(temporalSettings(env, { address: 'flag:1', namespace: 'flagged' })).toMatchObject({ address: 'flag:1', namespace: 'flagged' });
    expect(temporalSettings({ TEMPORAL_CONFIG_FILE: file }).address).toBe('localhost:7233');
  });

  test('TEMPORAL_TLS_CLIENT_CERT_PATH / _KEY_PATH are the mTLS pair; a named profile that is missing is an error', () => {
    writeFileSync(join(dir, 'c.pem'), 'C');
    writeFileSync(join(dir, 'k.pem'), 'K');
    const s = temporalSettings({ TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'c.pem'), TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir, 'k.pem'), TEMPORAL_CONFIG_FILE: file });
    expect((s.connection.tls as { clientCertPair?: unknown }).clientCertPair).toEqual({ crt: Buffer.from('C'), key: Buffer.from('K') });
    expect(() => temporalSettings({ TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'c.pem'), TEMPORAL_CONFIG_FILE: file })).toThrow(/must be set together/);
    expect(() => temporalSettings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' })).toThrow(/no \[profile.nope\]/);
  });
});
