// List-then-watch of one collection: the one loop behind the drain's waits (kube/watch.ts)
// and the bridge's reflectors (kube/controller/reflector.ts). It lists, then watches from the
// list's resourceVersion; a watch stream lives at most one segment (a stream that stalls without
// closing, seen under load, costs at most that), then the loop lists again or resumes from the last
// version seen, as the caller asks. 410 Gone (the version is compacted away) always lists again;
// other stream failures back off. Generic: no Slipway kinds here, and no imports from workflows/.
import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ListWatchOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Collection path, e.g. /api/v1/pods. */
  path: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** The complete current set and the list's resourceVersion (see listAllPages). */
  list: () => Promise<{ items: T[]; resourceVersion: string }>;
  /** After every (re)list; true (exactly) ends the loop ('done'). */
  onList: (items: T[]) => boolean | void;
  /** Every change a watch reports; true ends the loop ('done'). */
  onEvent: (type: WatchEventType, obj: T) => boolean | void;
  /** The longest one watch stream is trusted. */
  segmentMs: number;
  /**
   * Who ends a segment. 'client' (a wait): a timer started with the request, so a stream that
   * stalls costs at most segmentMs. 'server' (a long-lived cache): the server's watch timeout,
   * counted from when it serves the watch (a slow, loaded apiserver still gets whole segments),
   * with a client guard 30 s later for a stream that stalls.
   */
  segmentEndedBy: 'client' | 'server';
  /** After a segment: list again, or resume the watch from the last resourceVersion seen. */
  afterSegment: 'relist' | 'resume';
  /** A failed list: thrown to the caller, or retried here with the backoff. */
  listErrors: 'throw' | 'retry';
  /** Pause after a failed stream (doubled per failure up to maxMs; reset by any event). */
  backoff: { initialMs: number; maxMs: number };
  /** Ends the loop with 'timeout' at this time (ms since the epoch). Default: never. */
  deadline?: number;
  signal?: AbortSignal;
  log?: (msg: string) => void;
}

export type ListWatchEnd = 'done' | 'timeout' | 'aborted';

/** With segmentEndedBy 'server': how much longer than the server's timeout a stream is trusted. */
const SERVER_SEGMENT_GUARD_MS = 30_000;

/** Why one watch stream ended. */
type StreamEnd = { kind: 'done' | 'segment' | 'closed' | 'gone' | 'aborted' } | { kind: 'error'; error: unknown };

/** Runs until a callback says done, the deadline passes, or the signal aborts. */
export async function listWatch<T extends KubernetesObject>(o: ListWatchOptions<T>): Promise<ListWatchEnd> {
  const deadline = o.deadline ?? Infinity;
  let delay = o.backoff.initialMs;
  let resourceVersion: string | undefined;
  const pause = async (what: string, err: unknown) => {
    o.log?.(`watch ${o.path}: ${what}: ${describe(err)}; retrying in ${delay} ms`);
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), o.signal);
    delay = Math.min(delay * 2, o.backoff.maxMs);
  };
  // The first list always happens, even with a deadline already due: a zero-length wait is a
  // single look (the drain's first volume check shows what is attached before any waiting).
  for (let first = true; ; first = false) {
    if (o.signal?.aborted) return 'aborted';
    if (!first && Date.now() >= deadline) return 'timeout';
    if (resourceVersion === undefined) {
      let listed: { items: T[]; resourceVersion: string };
      try {
        listed = await o.list();
      } catch (err) {
        if (o.listErrors === 'throw') throw err;
        await pause('list failed', err);
        continue;
      }
      if (o.onList(listed.items) === true) return 'done';
      resourceVersion = listed.resourceVersion;
      // Aborted while the list was in flight: the abort event has fired already, so it would never come.
      if (o.signal?.aborted) return 'aborted';
      if (Date.now() >= deadline) return 'timeout';
    }
    const startedAt = Date.now();
    const guard = o.segmentEndedBy === 'server' ? SERVER_SEGMENT_GUARD_MS : 0;
    const end = await watchStream(o, resourceVersion, Math.min(deadline, startedAt + o.segmentMs + guard), (rv) => {
      resourceVersion = rv;
      delay = o.backoff.initialMs; // the stream works: reset the backoff
    });
    switch (end.kind) {
      case 'done':
      case 'aborted':
        return end.kind;
      case 'segment':
        if (o.afterSegment === 'relist') resourceVersion = undefined;
        break;
      case 'gone':
        resourceVersion = undefined;
        break;
      case 'closed':
        if (o.afterSegment === 'relist') resourceVersion = undefined;
        if (Date.now() - startedAt < 1000) await pause('watch ended at once', 'closed by the server');
        break;
      case 'error':
        if (statusCode(end.error) === 410 || o.afterSegment === 'relist') resourceVersion = undefined;
        await pause('watch failed', end.error);
        break;
    }
  }
}

/** One watch stream from `resourceVersion`, ended by the client at `until` at the latest. */
function watchStream<T extends KubernetesObject>(o: ListWatchOptions<T>, resourceVersion: string, until: number, seen: (rv: string) => void): Promise<StreamEnd> {
  return new Promise<StreamEnd>((resolve) => {
    let settled = false;
    let controller: AbortController | undefined;
    const finish = (r: StreamEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      controller?.abort();
      resolve(r);
    };
    const onAbort = () => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'segment' }), Math.max(0, until - Date.now()));
    o.signal?.addEventListener('abort', onAbort);
    if (o.signal?.aborted) return onAbort();
    new Watch(o.kc)
      .watch(
        o.path,
        {
          resourceVersion,
          allowWatchBookmarks: true,
          fieldSelector: o.fieldSelector,
          labelSelector: o.labelSelector,
          // 'client': the server's own close comes after ours, so the client's timer decides.
          timeoutSeconds: o.segmentEndedBy === 'server' ? Math.ceil(o.segmentMs / 1000) : Math.ceil((until - Date.now()) / 1000) + 5,
        },
        (type: string, obj: T) => {
          if (settled) return;
          if (type === 'ERROR') {
            const code = (obj as { code?: number }).code;
            return finish(code === 410 ? { kind: 'gone' } : { kind: 'error', error: new Error(`watch error ${code}: ${(obj as { message?: string }).message}`) });
          }
          const rv = obj.metadata?.resourceVersion;
          if (rv) seen(rv);
          if ((type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') && o.onEvent(type, obj) === true) finish({ kind: 'done' });
        },
        (err: unknown) => finish(err ? { kind: 'error', error: err } : { kind: 'closed' }),
      )
      .then((c) => {
        controller = c;
        if (settled) c.abort();
      })
      .catch((err: unknown) => finish({ kind: 'error', error: err }));
  });
}

/**
 * Every page of a list (limit/continue), as one set with the list's resourceVersion. The continue
 * token is `metadata._continue` in a typed list (V1ListMeta) but `metadata.continue` in the raw JSON
 * a custom resource's list returns: reading only the first took every custom-resource list to its
 * first page, so a bridge over more than 500 CycleNodeStatus objects never saw the others (#28).
 */
export async function listAllPages<T>(
  listPage: (page: { limit: number; _continue?: string }) => Promise<{ items: T[]; metadata?: ListMeta }>,
  limit = 500,
): Promise<{ items: T[]; resourceVersion: string }> {
  const items: T[] = [];
  let _continue: string | undefined;
  let resourceVersion = '';
  do {
    const page = await listPage({ limit, _continue });
    items.push(...page.items);
    _continue = page.metadata?._continue || page.metadata?.continue || undefined;
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
  } while (_continue);
  return { items, resourceVersion };
}

/** A list's metadata, typed (`_continue`) or raw JSON (`continue`). */
export interface ListMeta {
  resourceVersion?: string;
  _continue?: string;
  continue?: string;
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number; code?: number } | undefined)?.statusCode;
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.message}${statusCode(err) ? ` (HTTP ${statusCode(err)})` : ''}`;
  return String(err);
}
