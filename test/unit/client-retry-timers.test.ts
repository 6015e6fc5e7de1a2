// starter/client.ts RetryTimers: a connection's close() waits for the SDK's scheduled retries (a
// retry firing after close throws "Channel has been shut down" in its timer, uncaught), then
// retries nothing more.
import { RetryTimers } from '../../starter/client.js';

// gRPC status codes (UNAVAILABLE 14, RESOURCE_EXHAUSTED 8): retried by the SDK's default policy.
const unavailable = { code: 14, details: 'x', metadata: undefined as never };

test('settle waits until the last scheduled retry has fired, then refuses retries', async () => {
  const t = new RetryTimers();
  const o = t.options();
  expect(o.retryableDecider(1, unavailable)).toBe(true);
  const ms = o.delayFunction(3, unavailable); // the SDK's backoff: a few hundred ms at attempt 3
  expect(ms).toBeGreaterThan(0);
  const start = Date.now();
  await t.settle();
  expect(Date.now() - start).toBeGreaterThanOrEqual(ms);
  expect(o.retryableDecider(1, unavailable)).toBe(false);
});

test('settle returns at once when nothing is scheduled, and is bounded', async () => {
  const idle = new RetryTimers();
  let start = Date.now();
  await idle.settle();
  expect(Date.now() - start).toBeLessThan(50);
  const busy = new RetryTimers();
  const o = busy.options();
  for (let i = 0; i < 20; i++) o.delayFunction(10, { ...unavailable, code: 8 });
  start = Date.now();
  await busy.settle(300);
  expect(Date.now() - start).toBeLessThan(1000);
});
