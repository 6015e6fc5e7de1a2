import { duration, DURATION_BOUNDS, DURATION_PATTERN, parseDuration, Duration } from '../../api/duration.js';
import { DrainOptions } from '../../api/drain-options.js';
import { drainSettings } from '../../activities/drain/snapshot.js';
import { structuralSchema } from '../../api/crd.js';

describe('parseDuration', () => {
  test.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['1m30s500ms', 90_500],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  test.each(['', '5', '5 m', '-1s', '1d', 's', '1.s', ' 5m', '99999999999h', '1234567s', '1h1h1h1h1h1h1h1h1h1h1', '1us', '+5m'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/is not a duration/);
  });

  test('no text the pattern admits overflows int64 nanoseconds (Go\'s and CEL\'s duration())', () => {
    // The largest: 20 characters of 6-digit hours, e.g. 999999h999999h99999h.
    const largest = parseDuration('999999h999999h99999h');
    expect(largest * 1e6).toBeLessThan(2 ** 63);
    expect(DURATION_PATTERN).not.toContain('\\'); // it is also a CEL string literal
  });

  test('the zod Duration type accepts and rejects the same texts as parseDuration', () => {
    for (const t of ['1h30m', '0s', '250ms']) expect([t, Duration.safeParse(t).success]).toEqual([t, true]);
    for (const t of ['5 m', '-1s', '99999999999h']) expect([t, Duration.safeParse(t).success]).toEqual([t, false]);
    expect(Duration.safeParse('5 m').error!.issues[0]!.message).toBe('"5 m" is not a duration such as 90s, 5m, 1h30m or 250ms (at most 6 digits per number, 20 characters)');
  });
});

describe('bounded durations', () => {
  const d = duration({ min: '1m', max: '168h' });
  test.each([['1m', true], ['60s', true], ['168h', true], ['167h59m59s', true], ['59s', false], ['0s', false], ['168h1ms', false], ['999999h', false]])('%s within 1m..168h: %s', (t, ok) => {
    expect(d.safeParse(t).success).toBe(ok);
  });

  test('the refusal names the value and the bounds; a malformed text gets the format message only', () => {
    expect(d.safeParse('0s').error!.issues.map((i) => i.message)).toEqual(['"0s" must be a duration between 1m and 168h']);
    expect(d.safeParse('1d').error!.issues.map((i) => i.message)).toEqual(['"1d" is not a duration such as 90s, 5m, 1h30m or 250ms (at most 6 digits per number, 20 characters)']);
  });

  test('the CRD gets the same pattern and the same bounds as a CEL rule', () => {
    const s = structuralSchema(d);
    expect(s).toMatchObject({ type: 'string', maxLength: 20, pattern: DURATION_PATTERN });
    expect(s['x-kubernetes-validations']).toEqual([
      {
        rule: `!self.matches('${DURATION_PATTERN}') || (duration(self) >= duration('1m') && duration(self) <= duration('168h'))`,
        messageExpression: `'"' + self + '" must be a duration between 1m and 168h'`,
      },
    ]);
  });

  test('every bound is itself a duration, min below max', () => {
    for (const { min, max } of Object.values(DURATION_BOUNDS)) expect(parseDuration(min)).toBeLessThan(parseDuration(max));
  });
});

describe('DrainOptions', () => {
  test('defaults: 16 evictions in flight, 50 evictions per second, no timeouts, no plan', () => {
    expect(DrainOptions.parse({})).toEqual({ evictionConcurrency: 16, evictionQPS: 50 });
  });

  test('podEvictionTimeout policy defaults to Wait', () => {
    expect(DrainOptions.parse({ podEvictionTimeout: { after: '5m' } }).podEvictionTimeout).toEqual({ after: '5m', policy: 'Wait' });
  });

  test('a drainPlan entry defaults to podType Default', () => {
    expect(DrainOptions.parse({ drainPlan: [{ podPriority: 100 }] }).drainPlan).toEqual([{ podType: 'Default', podPriority: 100 }]);
  });

  test('an invalid duration is rejected with a message naming the field', () => {
    const r = DrainOptions.safeParse({ podEvictionTimeout: { after: '5 minutes' } });
    expect(r.success).toBe(false);
    const issue = r.error!.issues[0]!;
    expect(issue.path).toEqual(['podEvictionTimeout', 'after']);
    expect(issue.message).toBe('"5 minutes" is not a duration such as 90s, 5m, 1h30m or 250ms (at most 6 digits per number, 20 characters)');
  });

  test('timeouts shorter than 1s or longer than 168h are rejected', () => {
    expect(DrainOptions.safeParse({ podEvictionTimeout: { after: '250ms' } }).error!.issues.map((i) => i.message)).toEqual(['"250ms" must be a duration between 1s and 168h']);
    expect(DrainOptions.safeParse({ volumeDetachTimeout: '169h' }).success).toBe(false);
    expect(DrainOptions.safeParse({ podEvictionTimeout: { after: '1s' }, volumeDetachTimeout: '168h' }).success).toBe(true);
  });

  test('an invalid volumeDetachTimeout is rejected', () => {
    expect(DrainOptions.safeParse({ volumeDetachTimeout: '10' }).success).toBe(false);
  });

  test('a malformed drainPlan podSelector is rejected with a message', () => {
    const r = DrainOptions.safeParse({
      drainPlan: [{}, { podSelector: { matchLabels: { 'bad key!': 'x' }, matchExpressions: [{ key: 'tier', operator: 'In' }] } }],
    });
    expect(r.success).toBe(false);
    const issues = r.error!.issues.map((i) => ({ path: i.path, message: i.message }));
    expect(issues).toEqual([
      { path: ['drainPlan', 1, 'podSelector', 'matchLabels', 'bad key!'], message: expect.stringMatching(/^label key "bad key!" is not valid: /) },
      { path: ['drainPlan', 1, 'podSelector', 'matchExpressions', 0, 'values'], message: 'operator In on "tier" needs values' },
    ]);
  });

  test('out-of-range concurrency and QPS are rejected', () => {
    expect(DrainOptions.safeParse({ evictionConcurrency: 0 }).success).toBe(false);
    expect(DrainOptions.safeParse({ evictionConcurrency: 201 }).success).toBe(false);
    expect(DrainOptions.safeParse({ evictionQPS: 0 }).success).toBe(false);
    expect(DrainOptions.safeParse({ evictionConcurrency: 1, evictionQPS: 0.5 }).success).toBe(true);
  });

  test('an unknown policy is rejected', () => {
    expect(DrainOptions.safeParse({ podEvictionTimeout: { after: '1m', policy: 'Force' } }).success).toBe(false);
  });
});

describe('drainSettings', () => {
  test('converts durations to milliseconds and keeps the policy', () => {
    const s = drainSettings(DrainOptions.parse({ podEvictionTimeout: { after: '90s', policy: 'Delete' }, volumeDetachTimeout: '1h30m', evictionConcurrency: 4, evictionQPS: 2.5 }));
    expect(s).toEqual({ podEvictionTimeoutMs: 90_000, podEvictionTimeoutPolicy: 'Delete', volumeDetachTimeoutMs: 5_400_000, evictionConcurrency: 4, evictionQPS: 2.5 });
  });

  test('without options: no timeouts, policy Wait, default rates', () => {
    expect(drainSettings(DrainOptions.parse({}))).toEqual({
      podEvictionTimeoutMs: undefined,
      podEvictionTimeoutPolicy: 'Wait',
      volumeDetachTimeoutMs: undefined,
      evictionConcurrency: 16,
      evictionQPS: 50,
    });
  });

  test('a timeout without a policy acts as Wait', () => {
    expect(drainSettings(DrainOptions.parse({ podEvictionTimeout: { after: '1500ms' } }))).toMatchObject({ podEvictionTimeoutMs: 1500, podEvictionTimeoutPolicy: 'Wait' });
  });
});
