// One DrainRule reflector per worker process: the drain's classify and its waits read the rules
// from it instead of each listing (and watching) them. In a NodeMaintenance those lists were a
// sixth of the drain's requests (issue 11).
//
// Freshness: a caller passes the fingerprint it last judged by (DrainSnapshot.drainRulesSeen); the
// cache answers only when it is synced and agrees with it. Otherwise the caller lists, as before.
// So a drain's first classify always lists (a rule created just before the drain is never missed
// for the cache's lag), and a rule created mid-drain is seen when the cache sees it, as the per-wait
// watch saw it: a stream is trusted a minute at most, then listed again, and a failed one makes the
// cache answer nothing (and end the waits on it) until its next list. Started on first use,
// stopped after IDLE_MS unused (tests build many workers).
import { createHash } from 'node:crypto';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { Kube } from '../kube.js';
import { listWatch } from '../listwatch.js';

/** Identity of the set of DrainRules: any create, change or delete alters it. Short: it travels in workflow history. */
export const rulesFingerprint = (objects: Iterable<KubernetesObject>) =>
  createHash('sha256')
    .update([...objects].map((o) => `${o.metadata?.uid}@${o.metadata?.resourceVersion}`).sort().join(','))
    .digest('hex')
    .slice(0, 16);

/** One list of every DrainRule, as watchUntil wants it. */
export function drainRuleLister(kube: Kube): () => Promise<{ items: KubernetesObject[]; resourceVersion: string }> {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  return async () => {
    const res = (await api.listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural })) as {
      items: KubernetesObject[];
      metadata?: { resourceVersion?: string };
    };
    return { items: res.items, resourceVersion: res.metadata?.resourceVersion ?? '' };
  };
}

const IDLE_MS = 120_000;
/** As the per-wait watch it replaces: no stream is trusted longer, then a fresh list. */
const SEGMENT_MS = 60_000;

export class DrainRuleCache {
  private objects = new Map<string, KubernetesObject>();
  /** Set while the cache is synced and its stream healthy; undefined otherwise (callers then list). */
  private fingerprint?: string;
  private readonly listeners = new Set<(fingerprint: string | undefined) => void>();
  private readonly stop = new AbortController();
  private lastUse = Date.now();
  /** Lists made (the first and each relist): tests tell them from a classify's own. */
  lists = 0;

  constructor(kube: Kube, onStopped: () => void) {
    const lister = drainRuleLister(kube);
    const idle = setInterval(() => {
      if (Date.now() - this.lastUse <= IDLE_MS || this.listeners.size) return;
      this.unsync();
      onStopped(); // no new caller finds it
      this.stop.abort();
    }, 10_000);
    idle.unref();
    void listWatch<KubernetesObject>({
      kc: kube.config,
      path: '/apis/slipway.dev/v1alpha1/drainrules', // literal: the RBAC test reads watched paths from the code
      list: () => {
        this.lists++;
        return lister();
      },
      onList: (items) => this.replace(items),
      onEvent: (type, obj) => {
        const uid = obj.metadata?.uid;
        if (!uid) return;
        if (type === 'DELETED') this.objects.delete(uid);
        else this.objects.set(uid, obj);
        this.changed();
      },
      segmentMs: SEGMENT_MS,
      segmentEndedBy: 'client',
      afterSegment: 'relist',
      listErrors: 'retry', // no CRD, no RBAC, apiserver down: never synced, every caller lists
      backoff: { initialMs: 500, maxMs: 10_000 },
      // A failed list or stream: not trusted until the next list (no CRD, no RBAC, apiserver down).
      log: () => this.unsync(),
      signal: this.stop.signal,
    })
      .catch(() => undefined)
      .finally(() => {
        clearInterval(idle);
        this.unsync();
        onStopped();
      });
  }

  /** The rules, when the cache is synced and agrees with what the caller judged by; else undefined. */
  agreeing(since: string | undefined): KubernetesObject[] | undefined {
    this.lastUse = Date.now();
    if (since === undefined || this.fingerprint === undefined || this.fingerprint !== since) return undefined;
    return [...this.objects.values()];
  }

  /**
   * Calls `onChange` when the rules stop agreeing with `since`, or when the cache can no longer
   * tell (its stream failed, it stopped): the caller then looks for itself. Returns the
   * unsubscribe, or undefined when the cache cannot answer now (the caller watches by itself).
   */
  whenChanged(since: string | undefined, onChange: () => void): (() => void) | undefined {
    if (!this.agreeing(since)) return undefined;
    const listener = (now: string | undefined) => {
      if (now !== since) onChange();
    };
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      this.lastUse = Date.now();
    };
  }

  private replace(items: KubernetesObject[]): void {
    this.objects = new Map(items.filter((i) => i.metadata?.uid).map((i) => [i.metadata!.uid!, i]));
    this.changed();
  }

  private changed(): void {
    const now = rulesFingerprint(this.objects.values());
    if (now === this.fingerprint) return;
    this.fingerprint = now;
    for (const l of [...this.listeners]) l(now);
  }

  private unsync(): void {
    if (this.fingerprint === undefined) return;
    this.fingerprint = undefined;
    for (const l of [...this.listeners]) l(undefined);
  }
}

const caches = new WeakMap<Kube, DrainRuleCache>();

/** The process's cache for this client (started on first use). */
export function drainRuleCache(kube: Kube): DrainRuleCache {
  let c = caches.get(kube);
  if (!c) {
    c = new DrainRuleCache(kube, () => {
      if (caches.get(kube) === c) caches.delete(kube);
    });
    caches.set(kube, c);
  }
  return c;
}
