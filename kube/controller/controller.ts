// A controller (controller-runtime's shape, small): reflectors keep a cache per watched kind, every
// change becomes a key of the primary kind in a work queue, and a Reconciler brings that key's
// object to its desired state, one key at a time, retried with per-key backoff when it throws.
// Nothing here knows a Slipway kind: a new kind is a Reconciler plus the collections it watches.
// A Controller runs for one leadership term (runWhileLeading) and is stopped when it ends.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ObjectCache, keyOf } from './cache.js';
import { KeyedQueue } from './queue.js';
import { runReflector, type ListPage } from './reflector.js';
import { objectFields, type Log } from '../../shared/log.js';

/** Brings one primary object (by `namespace/name`) to its desired state; level-based and idempotent. */
export interface Reconciler {
  reconcile(key: string): Promise<void>;
}

/** A watched collection. */
export interface Watched<T extends KubernetesObject> {
  path: string;
  list: (page: { limit: number; _continue?: string; labelSelector?: string }) => Promise<ListPage<T>>;
  labelSelector?: string;
}

/** A secondary collection: a change of one of its objects reconciles the primary object it names. */
export interface WatchedSecondary<T extends KubernetesObject> extends Watched<T> {
  /** The primary object's key, or undefined for none. */
  ownerKey: (obj: T) => string | undefined;
}

export interface ControllerOptions {
  kc: KubeConfig;
  concurrency?: number;
  /** Every primary object is reconciled at least this often (a safety net; a no-op when nothing changed). */
  resyncIntervalMs?: number;
  /** A reconcile error not worth a log line (e.g. "not the leader"); it is retried all the same. */
  quietError?: (err: unknown) => boolean;
  /** Each failed reconcile that is not quiet (metrics). */
  onReconcileError?: (key: string, err: unknown) => void;
  /** Each reconcile's end (metrics, controller-runtime's shape): its length and result (requeue: a quiet error). */
  onReconciled?: (seconds: number, result: 'success' | 'error' | 'requeue') => void;
  log: Log;
  /** The primary objects' kind, on log lines. */
  kind?: string;
}

export class Controller {
  private readonly abort = new AbortController();
  private readonly reflectors: Promise<void>[] = [];
  private readonly starts: Array<() => Promise<void>> = [];
  private readonly synced: boolean[] = [];
  private queue: KeyedQueue | undefined;
  private primary: ObjectCache<KubernetesObject> | undefined;
  private resync: NodeJS.Timeout | undefined;

  constructor(private readonly o: ControllerOptions) {}

  /** Watches the primary collection; its cache is what reconciles read. */
  watchPrimary<T extends KubernetesObject>(w: Watched<T>): ObjectCache<T> {
    const cache = new ObjectCache<T>();
    this.primary = cache as unknown as ObjectCache<KubernetesObject>;
    this.register(w, cache, (items) => {
      const touched = cache.replace(items);
      return [...touched, ...cache.keys()];
    }, (obj) => keyOf(obj));
    return cache;
  }

  /** Watches a secondary collection (objects the primary ones own or name). */
  watchSecondary<T extends KubernetesObject>(w: WatchedSecondary<T>): ObjectCache<T> {
    const cache = new ObjectCache<T>();
    this.register(w, cache, (items) => {
      cache.replace(items);
      return this.primary?.keys() ?? [];
    }, w.ownerKey);
    return cache;
  }

  private register<T extends KubernetesObject>(w: Watched<T>, cache: ObjectCache<T>, onSync: (items: T[]) => string[], keyFor: (obj: T) => string | undefined): void {
    const i = this.synced.push(false) - 1;
    const { signal } = this.abort;
    this.starts.push(() =>
      runReflector<T>({
        kc: this.o.kc,
        path: w.path,
        list: w.list,
        labelSelector: w.labelSelector,
        signal,
        log: this.o.log,
        onSync: (items) => {
          const keys = onSync(items);
          this.synced[i] = true;
          for (const k of keys) this.enqueue(k);
        },
        onEvent: (type, obj) => {
          if (type === 'DELETED') cache.delete(obj);
          else cache.put(obj);
          const k = keyFor(obj);
          if (k) this.enqueue(k);
        },
      }),
    );
  }

  /** Starts the reflectors, the queue and the resync. Reconciles begin once every cache holds a full list. */
  start(reconciler: Reconciler): void {
    const timed = async (key: string) => {
      const t0 = performance.now();
      let result: 'success' | 'error' | 'requeue' = 'error';
      try {
        await reconciler.reconcile(key);
        result = 'success';
      } catch (err) {
        if (this.o.quietError?.(err)) result = 'requeue';
        throw err;
      } finally {
        this.o.onReconciled?.((performance.now() - t0) / 1000, result);
      }
    };
    this.queue = new KeyedQueue(timed, {
      concurrency: this.o.concurrency ?? 8,
      onError: (key, err, retryIn) => {
        if (this.o.quietError?.(err)) return;
        this.o.onReconcileError?.(key, err);
        this.o.log(`${key}: reconcile failed: ${err instanceof Error ? err.message : String(err)} (retry in ${retryIn} ms)`, { ...objectFields(this.o.kind ?? 'object', key), level: 'warn' });
      },
    });
    for (const s of this.starts) this.reflectors.push(s());
    this.resync = setInterval(() => {
      for (const k of this.primary?.keys() ?? []) this.enqueue(k);
    }, this.o.resyncIntervalMs ?? 30_000);
  }

  /** Keys queued or being reconciled now. */
  queueDepth(): number {
    return this.queue?.size ?? 0;
  }

  /** Every cache holds a full list: what is not in the primary cache does not exist. */
  isSynced(): boolean {
    return this.synced.length > 0 && this.synced.every(Boolean);
  }

  /** Queues a key (also for changes from outside the cluster, like a workflow's). Only once all caches are synced: "missing" must mean missing. */
  enqueue(key: string): void {
    if (this.synced.every(Boolean)) this.queue?.add(key);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.resync) clearInterval(this.resync);
    await this.queue?.close();
    await Promise.allSettled(this.reflectors);
  }
}
