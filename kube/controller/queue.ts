// A keyed work queue (client-go's workqueue, small): a key is processed by at most one worker at a
// time, a key added while queued is not queued twice, a key added while being processed is processed
// once more afterwards, and a failed key is retried with per-key exponential backoff. So any burst
// of watch events and poll ticks for one object turns into a few serial reconciles of its latest state.

export interface KeyedQueueOptions {
  concurrency?: number;
  /** First retry delay after a failure, doubled per consecutive failure up to maxBackoffMs. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  onError?: (key: string, err: unknown, retryInMs: number) => void;
}

export class KeyedQueue {
  private readonly queued: string[] = [];
  private readonly queuedSet = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inflight = new Set<Promise<void>>();
  private closed = false;
  private readonly concurrency: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    private readonly handler: (key: string) => Promise<void>,
    private readonly opts: KeyedQueueOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 8;
    this.initialBackoffMs = opts.initialBackoffMs ?? 500;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
  }

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queuedSet.has(key)) return;
    this.queuedSet.add(key);
    this.queued.push(key);
    this.pump();
  }

  /** Adds the key after `ms` (unless it is added sooner; then it runs again after ms anyway). */
  addAfter(key: string, ms: number): void {
    if (this.closed || this.timers.has(key)) return;
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, t);
  }

  /** Forgets a key's failure count (it succeeded, or the object is gone). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  get size(): number {
    return this.queued.length + this.active.size;
  }

  /** Stops taking keys and waits for the handlers in flight. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queued.length = 0;
    this.queuedSet.clear();
    await Promise.allSettled([...this.inflight]);
  }

  private pump(): void {
    while (!this.closed && this.active.size < this.concurrency && this.queued.length > 0) {
      const key = this.queued.shift()!;
      this.queuedSet.delete(key);
      this.active.add(key);
      const p = this.process(key);
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  private async process(key: string): Promise<void> {
    try {
      await this.handler(key);
      this.failures.delete(key);
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const retryIn = Math.min(this.initialBackoffMs * 2 ** (n - 1), this.maxBackoffMs);
      this.opts.onError?.(key, err, retryIn);
      this.addAfter(key, retryIn);
    } finally {
      this.active.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
    }
  }
}
