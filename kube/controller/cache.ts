// A controller's local copy of a collection, fed by a reflector and by the controller's own writes
// (the object an API call returns is newer than what the watch has delivered so far). An older copy
// never replaces a newer one, so a late watch event cannot roll back what the bridge just wrote.
import type { KubernetesObject } from '@kubernetes/client-node';

/** `namespace/name`, a controller's key for an object. */
export const objectKey = (namespace: string, name: string) => `${namespace}/${name}`;

export const keyOf = (o: KubernetesObject) => objectKey(o.metadata?.namespace ?? '', o.metadata?.name ?? '');

/** -1: a older than b, 1: newer, 0: same or not comparable (etcd's versions are integers; others are opaque). */
function compareVersions(a: string | undefined, b: string | undefined): number {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return 0;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export class ObjectCache<T extends KubernetesObject> {
  private readonly items = new Map<string, T>();

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** Stores `obj` unless the cache holds a newer version of the same object (same uid). */
  put(obj: T): void {
    const key = keyOf(obj);
    const cur = this.items.get(key);
    if (cur && cur.metadata?.uid === obj.metadata?.uid && compareVersions(obj.metadata?.resourceVersion, cur.metadata?.resourceVersion) < 0) return;
    this.items.set(key, obj);
  }

  delete(obj: T): void {
    const key = keyOf(obj);
    const cur = this.items.get(key);
    if (!cur || cur.metadata?.uid === obj.metadata?.uid) this.items.delete(key);
  }

  /** Replaces everything with a fresh list; returns the keys that changed or went away. */
  replace(list: T[]): string[] {
    const before = new Map(this.items);
    this.items.clear();
    for (const o of list) this.items.set(keyOf(o), o);
    const touched = new Set<string>();
    for (const [k, o] of before) {
      const now = this.items.get(k);
      if (!now || now.metadata?.resourceVersion !== o.metadata?.resourceVersion) touched.add(k);
    }
    for (const k of this.items.keys()) if (!before.has(k)) touched.add(k);
    return [...touched];
  }
}
