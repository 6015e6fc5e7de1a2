// List-then-watch until a condition over the current set of objects holds, or a deadline passes.
// Used by every wait in the drain, so waits react to changes at once instead of polling. A watch
// that ends (server timeout, 410 Gone, apiserver restart) is resumed from a fresh list, and no watch
// lives longer than a minute: a stream that stalls without closing (seen under load) costs at most
// that, not the whole wait.
import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

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
}

/** Resolves with the final objects and whether the condition held (false: timed out). */
export async function watchUntil<T extends KubernetesObject>(o: WatchUntilOptions<T>): Promise<{ met: boolean; objects: Map<string, T> }> {
  const deadline = Date.now() + o.timeoutMs;
  let objects = new Map<string, T>();
  for (;;) {
    if (o.signal?.aborted) throw o.signal.reason ?? new Error('aborted');
    const listed = await o.list();
    objects = new Map(listed.items.map((i) => [i.metadata!.uid!, i]));
    if (o.done(objects)) return { met: true, objects };
    if (Date.now() >= deadline) return { met: false, objects };
    const outcome = await watchOnce(o, objects, listed.resourceVersion, deadline);
    if (outcome === 'met') return { met: true, objects };
    if (outcome === 'timeout') return { met: false, objects };
    if (outcome === 'renew') continue; // the segment ended: list again at once
    // 'relist': the watch ended; list again from scratch, without spinning if it keeps ending.
    await new Promise((r) => setTimeout(r, 200));
  }
}

function watchOnce<T extends KubernetesObject>(
  o: WatchUntilOptions<T>,
  objects: Map<string, T>,
  resourceVersion: string,
  deadline: number,
): Promise<'met' | 'timeout' | 'relist' | 'renew'> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let controller: AbortController | undefined;
    const end = Math.min(deadline, Date.now() + (o.segmentMs ?? WATCH_SEGMENT_MS));
    const finish = (r: 'met' | 'timeout' | 'relist' | 'renew' | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(tick);
      o.signal?.removeEventListener('abort', onAbort);
      controller?.abort();
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const onAbort = () => finish(o.signal?.reason instanceof Error ? o.signal.reason : new Error('aborted'));
    const timer = setTimeout(() => finish(end < deadline ? 'renew' : 'timeout'), Math.max(0, end - Date.now()));
    const tick = setInterval(() => o.onTick?.(objects), 5000);
    o.signal?.addEventListener('abort', onAbort);
    // Aborted while the list was in flight: the event has fired already, so it would never come.
    if (o.signal?.aborted) return onAbort();
    new Watch(o.kc)
      .watch(
        o.path,
        {
          resourceVersion,
          allowWatchBookmarks: true,
          fieldSelector: o.fieldSelector,
          labelSelector: o.labelSelector,
          // The server's own close comes after ours, so the client's timer decides.
          timeoutSeconds: Math.ceil((end - Date.now()) / 1000) + 5,
        },
        (type, obj: T) => {
          if (settled) return;
          if (type === 'ERROR') return finish('relist'); // e.g. 410 Gone: resourceVersion too old
          if (type === 'BOOKMARK') return;
          const uid = obj.metadata?.uid;
          if (!uid) return;
          if (type === 'DELETED') objects.delete(uid);
          else objects.set(uid, obj);
          if (o.done(objects)) finish('met');
        },
        () => finish('relist'),
      )
      .then((c) => {
        controller = c;
        if (settled) c.abort();
      })
      .catch(() => finish('relist'));
  });
}
