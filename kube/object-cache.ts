// A reflector shared by the activities of one worker process: one list-watch of a collection kept
// in memory, that reads and waits use instead of a GET, or a list and a watch, each. Generic: no
// Slipway kinds here (the node cache and the per-node pod caches are built on it).
//
// It answers only while synced (after a list, with its stream healthy); a failed list or stream
// makes it answer nothing, and tells its subscribers so (they then list and watch for themselves),
// until its next list. No stream is trusted longer than segmentMs, then it lists again (as the
// per-wait watches it replaces). Started on first use, stopped after idleMs without a read or a
// subscriber (tests build many workers; a drained node's pods are not watched forever).
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { listWatch } from './listwatch.js';

export interface ObjectCacheOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Collection path, e.g. /api/v1/nodes. */
  path: string;
  fieldSelector?: string;
  list: () => Promise<{ items: T[]; resourceVersion: string }>;
  /** The map key of an object (its name for nodes, its uid for pods). */
  key: (obj: T) => string | undefined;
  idleMs: number;
  segmentMs: number;
  /** Called once, when the cache stops (idle, or aborted). */
  onStopped: () => void;
}

/** What a wait subscribes to: called with the current objects at once and after every change; undefined: the cache stopped answering. */
export type CacheListener<T> = (objects: Map<string, T> | undefined) => void;

export class ObjectCache<T extends KubernetesObject> {
  private objects = new Map<string, T>();
  private synced = false;
  private readonly listeners = new Set<CacheListener<T>>();
  private readonly syncWaiters = new Set<() => void>();
  private readonly stop = new AbortController();
  private lastUse = Date.now();
  /** Lists made (the first and each relist). */
  lists = 0;

  constructor(private readonly o: ObjectCacheOptions<T>) {
    let stopped = false;
    const stopping = () => {
      this.unsync();
      if (!stopped) o.onStopped(); // no new caller finds it
      stopped = true;
    };
    const idle = setInterval(() => {
      if (Date.now() - this.lastUse <= o.idleMs || this.listeners.size) return;
      stopping();
      this.stop.abort();
    }, Math.min(10_000, o.idleMs));
    idle.unref();
    void listWatch<T>({
      kc: o.kc,
      path: o.path,
      fieldSelector: o.fieldSelector,
      list: () => {
        this.lists++;
        return o.list();
      },
      onList: (items) => {
        this.objects = new Map();
        for (const i of items) this.put(i);
        this.synced = true;
        for (const w of [...this.syncWaiters]) w();
        this.changed();
      },
      onEvent: (type, obj) => {
        const k = o.key(obj);
        if (k === undefined) return;
        if (type === 'DELETED') this.objects.delete(k);
        else this.put(obj);
        this.changed();
      },
      segmentMs: o.segmentMs,
      segmentEndedBy: 'client',
      afterSegment: 'relist',
      listErrors: 'retry',
      backoff: { initialMs: 500, maxMs: 10_000 },
      // A failed list or stream: not trusted until the next list.
      log: () => this.unsync(),
      signal: this.stop.signal,
    })
      .catch(() => undefined)
      .finally(() => {
        clearInterval(idle);
        stopping();
      });
  }

  /** Every object, while synced; else undefined (the caller reads for itself). */
  current(): Map<string, T> | undefined {
    this.lastUse = Date.now();
    return this.synced ? this.objects : undefined;
  }

  /** One object, while synced; undefined when the cache cannot say or does not have it. */
  get(key: string): T | undefined {
    return this.current()?.get(key);
  }

  /** True once synced, false after `ms` without (a cache just started lists first: a wait may give it a moment). */
  whenSynced(ms: number): Promise<boolean> {
    this.lastUse = Date.now();
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.syncWaiters.delete(done);
        resolve(this.synced);
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.syncWaiters.add(done);
    });
  }

  /** Calls `listener` now and after every change; undefined (and no call) while the cache cannot answer. Returns the unsubscribe. */
  subscribe(listener: CacheListener<T>): (() => void) | undefined {
    const now = this.current();
    if (!now) return undefined;
    this.listeners.add(listener);
    try {
      listener(now);
    } catch (err) {
      this.listeners.delete(listener);
      throw err;
    }
    return () => {
      this.listeners.delete(listener);
      this.lastUse = Date.now();
    };
  }

  /**
   * A write of ours landed: `after` replaces the cached object if the cache still holds `before`,
   * the version the write was made against (nothing can lie between them, so `after` is the newer;
   * resourceVersions are compared for equality only). Otherwise the stream brings it.
   */
  wrote(before: T | undefined, after: T): void {
    const k = this.o.key(after);
    if (k === undefined || !before) return;
    const held = this.objects.get(k);
    if (held && held.metadata?.resourceVersion === before.metadata?.resourceVersion) {
      this.put(after);
      this.changed();
    }
  }

  private put(obj: T): void {
    const k = this.o.key(obj);
    if (k === undefined) return;
    // managedFields are most of an object's bytes, and nothing here reads them.
    if (obj.metadata?.managedFields) obj.metadata.managedFields = undefined;
    this.objects.set(k, obj);
  }

  private changed(): void {
    if (!this.synced) return;
    for (const l of [...this.listeners]) l(this.objects);
  }

  private unsync(): void {
    if (!this.synced) return;
    this.synced = false;
    for (const l of [...this.listeners]) l(undefined);
  }
}

/**
 * One cache per client and key (a node's pods; '' for a whole collection), made on first use and
 * forgotten when it stops.
 */
export function cacheRegistry<C extends object, T extends KubernetesObject>(make: (client: C, key: string, onStopped: () => void) => ObjectCache<T>) {
  const byClient = new WeakMap<C, Map<string, ObjectCache<T>>>();
  return (client: C, key = ''): ObjectCache<T> => {
    let caches = byClient.get(client);
    if (!caches) byClient.set(client, (caches = new Map()));
    let c = caches.get(key);
    if (!c) {
      const made: ObjectCache<T> = make(client, key, () => {
        if (caches!.get(key) === made) caches!.delete(key);
      });
      caches.set(key, (c = made));
    }
    return c;
  };
}
