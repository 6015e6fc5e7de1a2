// A reflector (client-go's name): list-then-watch of one collection into a local cache for as long
// as it runs. It runs kube/listwatch.ts's loop, the one the drain's waits run, with the policy
// of a long-lived cache: after each watch segment (the server's timeout) it resumes from the last
// resourceVersion it saw, relists only when that version is gone (410), and retries failed lists and
// watches with bounded exponential backoff while the apiserver is unreachable.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { listAllPages, listWatch, type ListMeta } from '../listwatch.js';
import type { Log } from '../../shared/log.js';

export interface ListPage<T> {
  items: T[];
  metadata?: ListMeta;
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
  log?: Log;
  /** The server-side watch timeout; the watch is then resumed. Default 300 s. */
  watchTimeoutSeconds?: number;
  backoff?: { initialMs: number; maxMs: number };
}

/** Runs until `signal` aborts. Never throws for API errors; logs them and retries. */
export async function runReflector<T extends KubernetesObject>(o: ReflectorOptions<T>): Promise<void> {
  await listWatch<T>({
    kc: o.kc,
    path: o.path,
    labelSelector: o.labelSelector,
    list: () => listAllPages((page) => o.list({ ...page, labelSelector: o.labelSelector })),
    // Never done: a callback's return value (say, Set.add's) must not end a reflector.
    onList: (items) => {
      o.onSync(items);
      return false;
    },
    onEvent: (type, obj) => {
      o.onEvent(type, obj);
      return false;
    },
    segmentMs: (o.watchTimeoutSeconds ?? 300) * 1000,
    segmentEndedBy: 'server',
    afterSegment: 'resume',
    listErrors: 'retry',
    backoff: o.backoff ?? { initialMs: 250, maxMs: 10_000 },
    signal: o.signal,
    // Its only lines are watch or list errors, retried: warnings about this collection.
    log: o.log && ((msg: string) => o.log!(msg, { level: 'warn', path: o.path })),
  });
}
