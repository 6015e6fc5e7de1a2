import { mapLimit, TokenBucket } from '../../activities/drain/rate-limit.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapLimit', () => {
  test('results keep input order even when later items finish first', async () => {
    const delays = [30, 5, 20, 1, 10, 0];
    const out = await mapLimit(delays, 3, async (d) => {
      await sleep(d);
      return `done-${d}`;
    });
    expect(out).toEqual(delays.map((d) => `done-${d}`));
  });

  test('never has more than `concurrency` calls in flight, and does use that many', async () => {
    let inFlight = 0;
    let peak = 0;
    let calls = 0;
    const items = Array.from({ length: 12 }, (_, i) => i);
    const out = await mapLimit(items, 4, async (i) => {
      calls++;
      inFlight++;
      peak = Math.max(peak, inFlight);
      await sleep(5 + (i % 3) * 5);
      inFlight--;
      return i * 2;
    });
    expect(peak).toBe(4);
    expect(calls).toBe(12);
    expect(out).toEqual(items.map((i) => i * 2));
  });

  test('a concurrency above the item count runs every item once', async () => {
    const seen: number[] = [];
    const out = await mapLimit([1, 2, 3], 50, async (i) => {
      seen.push(i);
      return i + 1;
    });
    expect(out).toEqual([2, 3, 4]);
    expect(seen.sort()).toEqual([1, 2, 3]);
  });

  test('no items: an empty result without calling fn', async () => {
    let calls = 0;
    const out = await mapLimit([] as number[], 4, async (x) => {
      calls++;
      return x;
    });
    expect(out).toEqual([]);
    expect(calls).toBe(0);
  });

  test('a failing item rejects the whole map', async () => {
    await expect(mapLimit([1, 2, 3], 2, async (i) => {
      if (i === 2) throw new Error('boom');
      return i;
    })).rejects.toThrow('boom');
  });
});

describe('TokenBucket', () => {
  test('lets the burst through at once', async () => {
    const bucket = new TokenBucket(5, 3);
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) await bucket.take();
    expect(Date.now() - t0).toBeLessThan(100);
  });

  test('after the burst, paces to about qps', async () => {
    // qps 20, burst 2: two at once, then four more at ~50 ms each (~200 ms in all).
    const bucket = new TokenBucket(20, 2);
    const t0 = Date.now();
    for (let i = 0; i < 6; i++) await bucket.take();
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(1000);
  });

  test('concurrent takers share the rate', async () => {
    const bucket = new TokenBucket(20, 1);
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 5 }, () => bucket.take()));
    const elapsed = Date.now() - t0;
    // One at once, four more at ~50 ms each.
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(1000);
  });

  test('the burst defaults to ceil(qps)', async () => {
    const bucket = new TokenBucket(2.5);
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) await bucket.take();
    expect(Date.now() - t0).toBeLessThan(100);
  });
});
