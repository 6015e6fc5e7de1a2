// List-then-watch until a condition over the current set of objects holds, or a deadline passes.
// Used by every wait in the drain, so waits react to changes at once instead of polling. The loop is
// listwatch.ts's (the bridge's reflectors run the same one): a watch that ends (server timeout, 410
// Gone, apiserver restart) is resumed from a fresh list, and no watch lives longer than a minute: a
// stream that stalls without closing (seen under load) costs at most that, not the whole wait.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { listWatch } from './listwatch.js';
import type { CacheListener } from './object-cache.js';

/** How long a wait gives a cache that has not synced yet before it lists and watches by itself. */
const FIRST_SYNC_MS = 3_000;

/** The longest a single watch stream is trusted before a fresh list. */
const WATCH_SEGMENT_MS = 60_000;

export interface WatchUntilOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** API path of the collection, e.g. /api/v1/pods */
  path: string;
  /** One page of the list: items and the list's resourceVersion. */
  list: () => Promise<{ items: T[]; resourceVersion: string }>;
  fieldSelector?: string;
  labelSelector?: string;
  /** Evaluated on the current objects (by uid) after the list and after every event. */
  done: (objects: Map<string, T>) => boolean;
  timeoutMs: number;
  /** Called every few seconds while waiting (activity heartbeat). */
  onTick?: (objects: Map<string, T>) => void;
  /** Aborts the wait (activity cancellation). */
  signal?: AbortSignal;
  /** The longest a single watch stream lives before a fresh list (default a minute). */
  segmentMs?: number;
  /**
   * The same objects from the worker's cache (object-cache.ts): waited on while it answers, instead
   * of a list and a watch of our own; when it cannot (not synced, its stream failed) the wait lists
   * and watches for the rest of its time, as without it.
   */
  cached?: { subscribe: (listener: CacheListener<T>) => (() => void) | undefined; whenSynced?: (ms: number) => Promise<boolean> };
}

/** Resolves with the final objects and whether the condition held (false: timed out). */
export async function watchUntil<T extends KubernetesObject>(o: WatchUntilOptions<T>): Promise<{ met: boolean; objects: Map<string, T> }> {
  const deadline = Date.now() + o.timeoutMs;
  if (o.signal?.aborted) throw abortReason(o.signal);
  if (o.cached) {
    // A cache started by this wait lists first: worth a moment, or every wave's first wait would list and watch by itself.
    await o.cached.whenSynced?.(Math.min(FIRST_SYNC_MS, deadline - Date.now()));
    const answered = await fromCache(o, o.cached, deadline);
    if (answered) return answered;
  }
  let objects = new Map<string, T>();
  const tick = setInterval(() => o.onTick?.(objects), 5000);
  try {
    const end = await listWatch<T>({
      kc: o.kc,
      path: o.path,
      fieldSelector: o.fieldSelector,
      labelSelector: o.labelSelector,
      list: o.list,
      onList: (items) => {
        objects = new Map(items.map((i) => [i.metadata!.uid!, i]));
        return o.done(objects);
      },
      onEvent: (type, obj) => {
        const uid = obj.metadata?.uid;
        if (!uid) return false;
        if (type === 'DELETED') objects.delete(uid);
        else objects.set(uid, obj);
        return o.done(objects);
      },
      // Each segment starts from a fresh list; a watch that ends is listed again without spinning.
      segmentMs: o.segmentMs ?? WATCH_SEGMENT_MS,
      segmentEndedBy: 'client',
      afterSegment: 'relist',
      listErrors: 'throw',
      backoff: { initialMs: 200, maxMs: 200 },
      deadline,
      signal: o.signal,
    });
    if (end === 'aborted') throw abortReason(o.signal!);
    return { met: end === 'done', objects };
  } finally {
    clearInterval(tick);
  }
}

/** The wait on the cache; undefined as soon as the cache cannot answer (the caller lists and watches). */
function fromCache<T extends KubernetesObject>(o: WatchUntilOptions<T>, cache: NonNullable<WatchUntilOptions<T>['cached']>, deadline: number): Promise<{ met: boolean; objects: Map<string, T> } | undefined> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let objects = new Map<string, T>();
    let unsubscribe: (() => void) | undefined;
    const finish = (end: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(tick);
      o.signal?.removeEventListener('abort', onAbort);
      unsubscribe?.();
      end();
    };
    const onAbort = () => finish(() => reject(abortReason(o.signal!)));
    if (o.signal?.aborted) return onAbort();
    const timer = setTimeout(() => finish(() => resolve({ met: false, objects })), Math.max(0, deadline - Date.now()));
    const tick = setInterval(() => o.onTick?.(objects), 5000);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    unsubscribe = cache.subscribe((now) => {
      if (settled) return;
      if (!now) return finish(() => resolve(undefined));
      objects = new Map(now); // a copy: done() may keep it, and the cache changes under it
      try {
        if (o.done(objects)) finish(() => resolve({ met: true, objects }));
      } catch (err) {
        finish(() => reject(err)); // the wait fails as its own watch would; the cache and its other waits go on
      }
    });
    if (!unsubscribe) finish(() => resolve(undefined));
    else if (settled) unsubscribe();
  });
}

const abortReason = (s: AbortSignal) => (s.reason instanceof Error ? s.reason : new Error('aborted'));
