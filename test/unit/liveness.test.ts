// worker/liveness.ts: every running activity heartbeats (every third of its heartbeat timeout, at least 2 s apart) with its own last details, so a
// dead worker costs its steps the heartbeat timeout; nothing is sent once the activity has ended.
import { jest } from '@jest/globals';
import type { Context } from '@temporalio/activity';
import { LIVENESS_BEAT_MS, livenessHeartbeat } from '../../worker/liveness.js';

afterEach(() => jest.useRealTimers());

test("heartbeats every 2 s with the activity's last details while it runs, and stops when it ends", async () => {
  jest.useFakeTimers();
  const sent: unknown[] = [];
  const ctx = { heartbeatFn: (d?: unknown) => sent.push(d) };
  const execute = livenessHeartbeat(ctx as unknown as Context).inbound!.execute!;
  const run = execute({ args: [], headers: {} }, async () => {
    ctx.heartbeatFn({ evicted: 1 }); // the activity's own heartbeat, through the wrapped function
    await new Promise((r) => setTimeout(r, 2 * LIVENESS_BEAT_MS + 500));
    return 'done';
  });
  await jest.advanceTimersByTimeAsync(2 * LIVENESS_BEAT_MS + 500);
  await expect(run).resolves.toBe('done');
  expect(sent).toEqual([{ evicted: 1 }, { evicted: 1 }, { evicted: 1 }]);
  await jest.advanceTimersByTimeAsync(3 * LIVENESS_BEAT_MS);
  expect(sent).toHaveLength(3);
  ctx.heartbeatFn('after'); // restored: the SDK's own function again
  expect(sent.at(-1)).toBe('after');
});

test('an activity that fails stops the beats too', async () => {
  jest.useFakeTimers();
  const sent: unknown[] = [];
  const ctx = { heartbeatFn: (d?: unknown) => sent.push(d) };
  const run = livenessHeartbeat(ctx as unknown as Context).inbound!.execute!({ args: [], headers: {} }, async () => {
    await new Promise((r) => setTimeout(r, LIVENESS_BEAT_MS + 100));
    throw new Error('boom');
  });
  const settled = expect(run).rejects.toThrow('boom');
  await jest.advanceTimersByTimeAsync(LIVENESS_BEAT_MS + 100);
  await settled;
  expect(sent).toEqual([undefined]);
  await jest.advanceTimersByTimeAsync(3 * LIVENESS_BEAT_MS);
  expect(sent).toEqual([undefined]);
});

test('#26.1 the beat follows the activity\'s heartbeat timeout: a watch with 60 s beats every 20 s, a short step with 10 s every 3.3 s', async () => {
  jest.useFakeTimers();
  const beats = async (heartbeatTimeoutMs: number | undefined, forMs: number) => {
    const sent: unknown[] = [];
    const ctx = { heartbeatFn: (d?: unknown) => sent.push(d), info: { heartbeatTimeoutMs } };
    const run = livenessHeartbeat(ctx as unknown as Context).inbound!.execute!({ args: [], headers: {} }, () => new Promise((r) => setTimeout(r, forMs)));
    await jest.advanceTimersByTimeAsync(forMs);
    await run;
    return sent.length;
  };
  expect(await beats(60_000, 60_500)).toBe(3);
  expect(await beats(10_000, 10_500)).toBe(3);
  expect(await beats(undefined, 10_500)).toBe(5); // no timeout: every LIVENESS_BEAT_MS
  expect(await beats(3_000, 10_500)).toBe(5); // never more often than every LIVENESS_BEAT_MS
});

test('#26.1 a watch\'s own heartbeats wait for the beat (every 20 s with the last details); a short step\'s go at once', async () => {
  jest.useFakeTimers();
  const run = async (heartbeatTimeoutMs: number) => {
    const sent: unknown[] = [];
    const ctx = { heartbeatFn: (d?: unknown) => sent.push(d), info: { heartbeatTimeoutMs } };
    const done = livenessHeartbeat(ctx as unknown as Context).inbound!.execute!({ args: [], headers: {} }, async () => {
      for (let i = 1; i <= 20; i++) {
        ctx.heartbeatFn({ tick: i }); // a tick every second, as watchUntil's and the wave wait's
        await new Promise((r) => setTimeout(r, 1000));
      }
    });
    await jest.advanceTimersByTimeAsync(20_500);
    await done;
    return sent;
  };
  expect(await run(60_000)).toEqual([{ tick: 20 }]);
  expect((await run(10_000)).length).toBeGreaterThanOrEqual(20);
});
