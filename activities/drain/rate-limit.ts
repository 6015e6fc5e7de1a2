// A token bucket for client-side request rates (QPS with a burst), and a bounded parallel map.

export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  constructor(
    private readonly qps: number,
    private readonly burst: number = Math.max(1, Math.ceil(qps)),
  ) {
    this.tokens = this.burst;
  }

  async take(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.tokens) / this.qps) * 1000)));
    }
  }
}

/** Runs fn over items with at most `concurrency` in flight; results in input order. */
export async function mapLimit<T, R>(items: T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
}
