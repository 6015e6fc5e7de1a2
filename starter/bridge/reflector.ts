// List-then-watch of one collection into a local cache, for as long as it runs: the watch resumes
// from the last resourceVersion it saw when the stream ends (server timeout, apiserver restart,
// network error), relists when that version is gone (410), and retries with bounded exponential
// backoff while the apiserver is unreachable. The same loop as activities/watch.ts, kept running.
import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

export interface ListPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; _continue?: string };
}

export interface ReflectorOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Collection path, e.g. /apis/slipway.dev/v1alpha1/cyclenoderequests. */
  path: string;
  /** One page of the list (limit/continue handled here). */
  list: (page: { limit: number; _continue?: string; labelSelector?: string }) => Promise<ListPage<T>>;
  labelSelector?: string;
  /** After every (re)list: the complete current set. */
  onSync: (items: T[]) => void;
  /** Every change the watch reports. */
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T) => void;
  signal: AbortSignal;
  log?: (msg: string) => void;
  /** Server-side watch timeout; the watch is then resumed. Default 300 s. */
  watchTimeoutSeconds?: number;
  backoff?: { initialMs: number; maxMs: number };
}

type Outcome = { kind: 'resume' } | { kind: 'relist' } | { kind: 'error'; error: unknown };

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/** Runs until `signal` aborts. Never throws for API errors; logs them and retries. */
export async function runReflector<T extends KubernetesObject>(o: ReflectorOptions<T>): Promise<void> {
  const backoff = o.backoff ?? { initialMs: 250, maxMs: 10_000 };
  let delay = backoff.initialMs;
  let resourceVersion: string | undefined;
  const fail = async (what: string, err: unknown) => {
    o.log?.(`watch ${o.path}: ${what}: ${describe(err)}; retrying in ${delay} ms`);
    await sleep(delay, o.signal);
    delay = Math.min(delay * 2, backoff.maxMs);
  };
  while (!o.signal.aborted) {
    if (resourceVersion === undefined) {
      try {
        resourceVersion = await listAll(o);
      } catch (err) {
        await fail('list failed', err);
        continue;
      }
    }
    const startedAt = Date.now();
    const outcome = await watchOnce(o, resourceVersion, (rv) => {
      resourceVersion = rv;
      delay = backoff.initialMs; // the stream works: reset the backoff
    });
    if (o.signal.aborted) break;
    if (outcome.kind === 'relist') resourceVersion = undefined;
    else if (outcome.kind === 'resume' && Date.now() - startedAt < 1000) await fail('watch ended at once', 'closed by the server');
    else if (outcome.kind === 'error') {
      if (statusCode(outcome.error) === 410) resourceVersion = undefined;
      await fail('watch failed', outcome.error);
    }
  }
}

async function listAll<T extends KubernetesObject>(o: ReflectorOptions<T>): Promise<string> {
  const items: T[] = [];
  let _continue: string | undefined;
  let rv = '';
  do {
    const page = await o.list({ limit: 500, _continue, labelSelector: o.labelSelector });
    items.push(...page.items);
    _continue = page.metadata?._continue || undefined;
    rv = page.metadata?.resourceVersion ?? rv;
  } while (_continue);
  o.onSync(items);
  return rv;
}

function watchOnce<T extends KubernetesObject>(o: ReflectorOptions<T>, resourceVersion: string, seen: (rv: string) => void): Promise<Outcome> {
  const timeoutSeconds = o.watchTimeoutSeconds ?? 300;
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    let controller: AbortController | undefined;
    const finish = (r: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      o.signal.removeEventListener('abort', onAbort);
      controller?.abort();
      resolve(r);
    };
    const onAbort = () => finish({ kind: 'resume' });
    // The server ends the watch after timeoutSeconds; a stream silent for much longer is dead.
    const guard = setTimeout(() => finish({ kind: 'resume' }), (timeoutSeconds + 30) * 1000);
    o.signal.addEventListener('abort', onAbort);
    new Watch(o.kc)
      .watch(
        o.path,
        { resourceVersion, allowWatchBookmarks: true, labelSelector: o.labelSelector, timeoutSeconds },
        (type: string, obj: T) => {
          if (settled) return;
          if (type === 'ERROR') {
            const code = (obj as { code?: number }).code;
            return finish(code === 410 ? { kind: 'relist' } : { kind: 'error', error: new Error(`watch error ${code}: ${(obj as { message?: string }).message}`) });
          }
          const rv = obj.metadata?.resourceVersion;
          if (rv) seen(rv);
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') o.onEvent(type, obj);
        },
        (err: unknown) => finish(err ? { kind: 'error', error: err } : { kind: 'resume' }),
      )
      .then((c) => {
        controller = c;
        if (settled) c.abort();
      })
      .catch((err: unknown) => finish({ kind: 'error', error: err }));
  });
}

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number } | undefined)?.statusCode;
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.message}${statusCode(err) ? ` (HTTP ${statusCode(err)})` : ''}`;
  return String(err);
}
