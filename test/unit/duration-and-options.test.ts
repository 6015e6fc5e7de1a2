import { parseDuration, Duration } from '../../api/duration.js';
import { DrainOptions } from '../../api/drain-options.js';
import { drainSettings } from '../../activities/drain/snapshot.js';

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

  test.each(['', '5', '5 m', '-1s', '1d', 's', '1.s', ' 5m'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/is not a duration/);
  });

  test('the zod Duration type accepts and rejects the same texts', () => {
    expect(Duration.safeParse('1h30m').success).toBe(true);
    expect(Duration.safeParse('5 m').success).toBe(false);
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
    expect(issue.message).toBe('a duration such as 90s, 5m or 1h30m');
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
      { path: ['drainPlan', 1, 'podSelector'], message: 'label key "bad key!" is not a valid name' },
      { path: ['drainPlan', 1, 'podSelector'], message: 'operator In on "tier" needs values' },
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
    expect(drainSettings(DrainOptions.parse({ podEvictionTimeout: { after: '250ms' } }))).toMatchObject({ podEvictionTimeoutMs: 250, podEvictionTimeoutPolicy: 'Wait' });
  });
});
