// List-then-watch until a condition over the current set of objects holds, or a deadline passes.
// Used by every wait in the drain, so waits react to changes at once instead of polling. The loop is
// listwatch.ts's (the bridge's reflectors run the same one): a watch that ends (server timeout, 410
// Gone, apiserver restart) is resumed from a fresh list, and no watch lives longer than a minute: a
// stream that stalls without closing (seen under load) costs at most that, not the whole wait.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { listWatch } from './listwatch.js';

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
  if (o.signal?.aborted) throw abortReason(o.signal);
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

const abortReason = (s: AbortSignal) => (s.reason instanceof Error ? s.reason : new Error('aborted'));
