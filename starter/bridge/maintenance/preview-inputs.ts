// Pure: which cluster events change what an Idle maintenance's preview read (PreviewInputs), and when
// to tell its workflow. The bridge's feed (preview-feed.ts) runs the watches and sends the signal.
// What counts: a pod on a selected node added or deleted, one leaving (deletionTimestamp) or
// finishing, or changed other than by its status (readiness flips are not); a PDB of the previewed
// pods' namespaces added or deleted, changed other than by its status, or flipping between blocking
// (disruptionsAllowed 0) and not; any DrainRule change but a status-only one; a node entering or
// leaving the selector. Nothing per pod is kept: per maintenance, sets of names.
import type { KubernetesObject, V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { NodeSelector } from '../../../api/node-maintenance.js';
import { matchesNodeSelector } from '../../../api/node-selector.js';
import type { PreviewInputs, PreviewReadFrom } from '../../../shared/maintenance-preview.js';

export type FeedEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What the feed keeps of one Idle maintenance. */
interface Watched {
  /** The inputs and selector these sets were made from: the same again keeps what events taught them. */
  sig: string;
  nodes: Set<string>;
  namespaces: Set<string>;
  blocking: Set<string>;
  nodeSelector: NodeSelector;
}

/**
 * A status-only update (the newest managedFields entry is the status subresource's): pod readiness,
 * PDB counters. What the preview reads from a status (phase, disruptionsAllowed) is checked apart.
 */
export function statusOnly(o: KubernetesObject): boolean {
  const fields = o.metadata?.managedFields ?? [];
  if (!fields.length) return false;
  const time = (f: { time?: Date | string }) => (f.time ? new Date(f.time).getTime() : 0);
  const newest = Math.max(...fields.map(time));
  return fields.filter((f) => time(f) === newest).every((f) => f.subresource === 'status');
}

/** The Idle maintenances being watched (by object key) and which of them an event concerns. */
export class PreviewWatchers {
  private readonly byKey = new Map<string, Watched>();
  /** node name → keys whose preview read its pods; namespace → keys whose previewed pods live there. */
  private readonly byNode = new Map<string, Set<string>>();
  private readonly byNamespace = new Map<string, Set<string>>();

  get size(): number {
    return this.byKey.size;
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  /** What `key`'s latest preview read (undefined: not Idle, or gone: no longer watched). */
  set(key: string, inputs: PreviewInputs | undefined, nodeSelector?: NodeSelector): void {
    const sig = inputs && nodeSelector ? JSON.stringify([inputs, nodeSelector]) : '';
    const old = this.byKey.get(key);
    if (old?.sig === sig) return;
    if (old) {
      for (const n of old.nodes) unindex(this.byNode, n, key);
      for (const ns of old.namespaces) unindex(this.byNamespace, ns, key);
      this.byKey.delete(key);
    }
    if (!inputs || !nodeSelector) return;
    const w: Watched = { sig, nodes: new Set(inputs.nodes), namespaces: new Set(inputs.namespaces), blocking: new Set(inputs.blockingPdbs), nodeSelector };
    this.byKey.set(key, w);
    for (const n of w.nodes) index(this.byNode, n, key);
    for (const ns of w.namespaces) index(this.byNamespace, ns, key);
  }

  /** Keys a pod event changes. */
  pod(type: FeedEventType, p: V1Pod): string[] {
    const keys = this.byNode.get(p.spec?.nodeName ?? '');
    if (!keys) return [];
    const leaving = !!p.metadata?.deletionTimestamp || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
    return type !== 'MODIFIED' || leaving || !statusOnly(p) ? [...keys] : [];
  }

  /** Keys a PDB event changes (the blocking flip is remembered, so the same state counts once). */
  pdb(type: FeedEventType, b: V1PodDisruptionBudget): string[] {
    const ns = b.metadata?.namespace ?? '';
    const pdbKey = `${ns}/${b.metadata?.name}`;
    const blocks = type !== 'DELETED' && (b.status?.disruptionsAllowed ?? 0) <= 0;
    const out: string[] = [];
    for (const key of this.byNamespace.get(ns) ?? []) {
      const w = this.byKey.get(key)!;
      if (type !== 'MODIFIED' || !statusOnly(b) || blocks !== w.blocking.has(pdbKey)) out.push(key);
      if (blocks) w.blocking.add(pdbKey);
      else w.blocking.delete(pdbKey);
    }
    return out;
  }

  /** Keys a DrainRule event changes: every one (a rule may take any pod). */
  rule(type: FeedEventType, r: KubernetesObject): string[] {
    return type !== 'MODIFIED' || !statusOnly(r) ? this.keys() : [];
  }

  /** Keys whose selection a node event changes (remembered: the same state counts once). */
  node(type: FeedEventType, n: V1Node): string[] {
    const name = n.metadata?.name ?? '';
    const labels = n.metadata?.labels ?? {};
    const out: string[] = [];
    for (const [key, w] of this.byKey) {
      const selected = type !== 'DELETED' && matchesNodeSelector(w.nodeSelector, { name, labels });
      if (selected === w.nodes.has(name)) continue;
      out.push(key);
      // Its pods count from now on (before the next preview says so), or no longer.
      if (selected) {
        w.nodes.add(name);
        index(this.byNode, name, key);
      } else {
        w.nodes.delete(name);
        unindex(this.byNode, name, key);
      }
    }
    return out;
  }
}

function index(m: Map<string, Set<string>>, at: string, key: string): void {
  let s = m.get(at);
  if (!s) m.set(at, (s = new Set()));
  s.add(key);
}

function unindex(m: Map<string, Set<string>>, at: string, key: string): void {
  const s = m.get(at);
  if (!s) return;
  s.delete(key);
  if (!s.size) m.delete(at);
}

/**
 * An event that could change some Idle preview, whoever's: what the judges above count, less what
 * depends on one maintenance's sets (a PDB counter update counts here whatever it flips). A node's
 * heartbeat and a pod's readiness flip do not.
 */
export function mayMatter(what: keyof PreviewReadFrom, type: FeedEventType, o: KubernetesObject): boolean {
  if (type !== 'MODIFIED' || !statusOnly(o)) return true;
  if (what === 'pdbs') return true;
  const phase = what === 'pods' ? (o as V1Pod).status?.phase : undefined;
  return !!o.metadata?.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed';
}

/** a < b, as resourceVersions (etcd revisions); undefined when either is not one (then nobody can tell). */
export function versionBefore(a: string, b: string): boolean | undefined {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  return BigInt(a) < BigInt(b);
}

/**
 * Per kind, how far the feed's watches have told what matters: where they began (a watch from a
 * version tells everything after it), then each event that may matter. A maintenance first seen
 * with a preview that read before that (the bridge was down or was not leading when it read, or an
 * event came between its reads and the status query that told the feed of it) may have missed a
 * change: it is told once. One seen later read after, and the watches tell it from there.
 */
export class FeedReach {
  private readonly at = new Map<keyof PreviewReadFrom, string>();

  /** The watch of `what` tells everything after `rv` (it began there, or an event came at `rv`). */
  reached(what: keyof PreviewReadFrom, rv: string | undefined): void {
    if (!rv) return;
    const cur = this.at.get(what);
    if (cur === undefined || versionBefore(cur, rv) !== false) this.at.set(what, rv);
  }

  /** A preview that read at `from` may have missed a change the watches saw (or nobody can tell). */
  behind(from: PreviewReadFrom): boolean {
    for (const [what, rv] of this.at) if (versionBefore(from[what], rv) !== false) return true;
    return false;
  }

  clear(): void {
    this.at.clear();
  }
}

/** A change is told once no other came for this long, */
export const SETTLE_MS = 1_000;
/** or this long after the first, whichever comes first. */
export const SETTLE_MAX_MS = 5_000;

/** Per key: marked changes, due once they settle (at most one answer per settle window). */
export class Debounce {
  private readonly marked = new Map<string, { first: number; last: number }>();

  constructor(
    private readonly settleMs = SETTLE_MS,
    private readonly maxMs = SETTLE_MAX_MS,
  ) {}

  mark(key: string, now: number): void {
    const m = this.marked.get(key);
    if (m) m.last = now;
    else this.marked.set(key, { first: now, last: now });
  }

  forget(key: string): void {
    this.marked.delete(key);
  }

  /** The keys due now (they are unmarked). */
  due(now: number): string[] {
    const out: string[] = [];
    for (const [key, m] of this.marked) {
      if (now >= this.dueAt(m)) {
        out.push(key);
        this.marked.delete(key);
      }
    }
    return out;
  }

  /** When the next key falls due (undefined: none marked). */
  nextAt(): number | undefined {
    let next: number | undefined;
    for (const m of this.marked.values()) next = Math.min(next ?? Infinity, this.dueAt(m));
    return next;
  }

  private dueAt(m: { first: number; last: number }): number {
    return Math.min(m.last + this.settleMs, m.first + this.maxMs);
  }
}
