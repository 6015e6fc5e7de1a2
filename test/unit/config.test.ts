import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { temporalSettings, webUiLink } from '../../shared/temporal.js';
import { awsSettings } from '../../activities/aws.js';
import { callerIdentity } from '../../starter/client.js';

describe('Temporal settings', () => {
  test('default to the local dev server without TLS', () => {
    const s = temporalSettings({});
    expect(s).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'slipway' });
    expect(s.connection.tls).toBeUndefined();
    expect(s.connection.apiKey).toBeUndefined();
  });

  test('mTLS reads the client certificate pair and CA from files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-tls-'));
    for (const f of ['crt', 'key', 'ca']) writeFileSync(join(dir, f), `--${f}--`);
    const s = temporalSettings({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_TLS_CERT: join(dir, 'crt'),
      TEMPORAL_TLS_KEY: join(dir, 'key'),
      TEMPORAL_TLS_CA: join(dir, 'ca'),
    });
    const tls = s.connection.tls as { clientCertPair: { crt: Buffer; key: Buffer }; serverRootCACertificate: Buffer };
    expect(tls.clientCertPair.crt.toString()).toBe('--crt--');
    expect(tls.clientCertPair.key.toString()).toBe('--key--');
    expect(tls.serverRootCACertificate.toString()).toBe('--ca--');
    expect(s.namespace).toBe('ns.acct');
  });

  test('an API key turns TLS on and names the namespace in the metadata', () => {
    const s = temporalSettings({ TEMPORAL_API_KEY: 'k', TEMPORAL_NAMESPACE: 'prod' });
    expect(s.connection.apiKey).toBe('k');
    expect(s.connection.tls).toBeDefined();
    expect(s.connection.metadata).toEqual({ 'temporal-namespace': 'prod' });
  });

  test('a certificate without its key is refused', () => {
    expect(() => temporalSettings({ TEMPORAL_TLS_CERT: '/x.crt' })).toThrow(/must be set together/);
  });

  test('the Web UI link names the namespace and escapes the workflow ID', () => {
    expect(webUiLink('cycle/a b', { TEMPORAL_NAMESPACE: 'ops' })).toBe('http://127.0.0.1:8233/namespaces/ops/workflows/cycle%2Fa%20b');
  });
});

describe('AWS settings', () => {
  test('an emulator endpoint and region come from the environment', () => {
    expect(awsSettings({ AWS_ENDPOINT_URL: 'http://127.0.0.1:5000', AWS_REGION: 'eu-west-1' })).toMatchObject({
      endpoint: 'http://127.0.0.1:5000',
      region: 'eu-west-1',
    });
    expect(awsSettings({}).endpoint).toBeUndefined();
  });
});

describe('caller identity (recorded by Temporal with every signal and update)', () => {
  const saved = process.env.SLIPWAY_IDENTITY;
  afterEach(() => {
    if (saved === undefined) delete process.env.SLIPWAY_IDENTITY;
    else process.env.SLIPWAY_IDENTITY = saved;
  });
  test('SLIPWAY_IDENTITY wins; otherwise user@host of this process', () => {
    process.env.SLIPWAY_IDENTITY = 'ci-bot@pipeline';
    expect(callerIdentity()).toBe('ci-bot@pipeline');
    delete process.env.SLIPWAY_IDENTITY;
    expect(callerIdentity()).toBe(`${userInfo().username}@${hostname()}`);
  });
});
