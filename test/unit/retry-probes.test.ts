// Start-up waiting and the probe endpoints of the worker and the bridge (the processes themselves
// are tested started before their servers in test/bad-input/processes.test.ts).
import { oneLine, untilReachable } from '../../shared/retry.js';
import { probePortFromEnv, serveProbes, type Readiness } from '../../shared/probes.js';

describe('untilReachable', () => {
  test('retries with doubling, capped delays, one line per try, and returns the value', async () => {
    const lines: string[] = [];
    let n = 0;
    const v = await untilReachable('Temporal at x:1', async () => {
      if (++n < 4) throw new Error(`refused ${n}`);
      return 'ok';
    }, { log: (l) => lines.push(l), initialDelayMs: 10, maxDelayMs: 20 });
    expect(v).toBe('ok');
    expect(lines).toEqual([
      'Temporal at x:1 unreachable (refused 1); retrying in 0s (attempt 1)',
      'Temporal at x:1 unreachable (refused 2); retrying in 0s (attempt 2)',
      'Temporal at x:1 unreachable (refused 3); retrying in 0s (attempt 3)',
      'Temporal at x:1: reached after 4 attempts',
    ]);
  });

  test('an abort ends the wait at once with the last error, during a wait or before it', async () => {
    const early = new AbortController();
    const started = Date.now();
    await expect(untilReachable('x', async () => {
      throw new Error('down');
    }, { log: () => early.abort(), initialDelayMs: 60_000, signal: early.signal })).rejects.toThrow('down');
    const late = new AbortController();
    setTimeout(() => late.abort(), 50);
    await expect(untilReachable('x', async () => {
      throw new Error('still down');
    }, { log: () => undefined, initialDelayMs: 60_000, signal: late.signal })).rejects.toThrow('still down');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('oneLine', () => {
  test('the OS message out of the core SDK transport error, no stack, no Rust debug text', () => {
    const tonic = 'tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", 127.0.0.1:7299, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))';
    expect(oneLine(new Error(tonic))).toBe('transport error: Connection refused');
  });
  test("fetch's hidden cause is named; only the first line", () => {
    const err = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:6444') });
    expect(oneLine(err)).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:6444');
    expect(oneLine(new Error('a\n    at x (y.js:1)'))).toBe('a');
  });
});

describe('probes', () => {
  test('SLIPWAY_PROBE_PORT: unset → none; a bad value is an error naming it', () => {
    expect(probePortFromEnv({})).toBeUndefined();
    expect(probePortFromEnv({ SLIPWAY_PROBE_PORT: '8081' })).toBe(8081);
    expect(() => probePortFromEnv({ SLIPWAY_PROBE_PORT: 'eighty' })).toThrow('SLIPWAY_PROBE_PORT="eighty" is not a port number');
    expect(() => probePortFromEnv({ SLIPWAY_PROBE_PORT: '70000' })).toThrow('not a port number');
  });

  test('/healthz 200 always; /readyz 503 with the reason until ready, then 200', async () => {
    let r: Readiness = { ready: false, reason: 'waiting for Temporal at x:1' };
    const p = await serveProbes(0, () => r);
    try {
      const get = async (path: string) => {
        const res = await fetch(`http://127.0.0.1:${p.port}${path}`);
        return `${res.status} ${(await res.text()).trim()}`;
      };
      expect(await get('/healthz')).toBe('200 ok');
      expect(await get('/readyz')).toBe('503 not ready: waiting for Temporal at x:1');
      r = { ready: true, reason: 'polling q' };
      expect(await get('/readyz')).toBe('200 ok: polling q');
      expect(await get('/nope')).toBe('404 ');
    } finally {
      await p.close();
    }
  });
});
