// The held nodes' feed (#26.1): one Node watch for the whole cluster, for as long as the bridge
// leads, that tells a held node's coordinator (nm-node/<node>, signal nodeChanged) when the node
// changes in a way its holders care about: uncordoned or its held-by gone while it is held (NM-2.5),
// a cycle's claim come or gone (NM-7.7), the node deleted or created again. The coordinators then
// wait on no activity at all (no heartbeat per held node). Level-triggered: whenever the watch
// (re)lists (a new leadership term, a restarted bridge, a version gone), every node that looks held
// or claimed, and every node whose coordinator runs (one gone meanwhile: in no list), is told once,
// so a change while no bridge watched is not lost. Nothing is cached but each node's claim (to see
// it change).
import type { V1Node } from '@kubernetes/client-node';
import { CYCLED_BY } from '../../../api/cycle-node-request.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL } from '../../../api/node-maintenance.js';
import type { Kube } from '../../../kube/client.js';
import { listAllPages, listWatch, type WatchEventType } from '../../../kube/listwatch.js';
import type { Log } from '../../../shared/log.js';

/** The node carries a maintenance's marks (its coordinator runs, or ran until just now). */
const marked = (n: V1Node | undefined): boolean => n?.metadata?.annotations?.[HELD_BY_ANNOTATION] !== undefined || n?.metadata?.labels?.[MAINTENANCE_STATE_LABEL] !== undefined;
const claimOf = (n: V1Node | undefined): string | undefined => n?.metadata?.annotations?.[CYCLED_BY];

/**
 * Whether a watch event concerns a held node's coordinator. `claimBefore`: the node's claim before
 * the event. A coordinator's own writes (cordoned, labelled and annotated in one patch) do not.
 */
export function concernsHolder(type: WatchEventType, n: V1Node, claimBefore: string | undefined): boolean {
  if (type === 'ADDED') return true; // a node back under a held node's name (its coordinator saw it gone)
  if (type === 'DELETED') return marked(n) || claimBefore !== undefined;
  if (claimOf(n) !== claimBefore) return true;
  if (!marked(n)) return false;
  return n.spec?.unschedulable !== true || n.metadata?.annotations?.[HELD_BY_ANNOTATION] === undefined;
}

/** On a (re)list: the nodes whose coordinator is told once (held or claimed). */
export const toldOnList = (n: V1Node): boolean => marked(n) || claimOf(n) !== undefined;

export interface HeldNodeFeedOptions {
  kube: Kube;
  /** Signals nodeChanged to the node's coordinator; false: none runs (nothing to tell). */
  tell: (node: string) => Promise<boolean>;
  /** Checked before each signal: only the leader tells. */
  isLeader: () => boolean;
  /** Counts the signals sent (nodeSignals). */
  stats: { nodeSignals: number };
  log: Log;
  /** The nodes whose coordinator runs (Temporal's visibility), told on every list besides the held ones. */
  coordinators?: () => Promise<string[]>;
}

/** How many signals are in flight at once (a relist of a big pool tells every held node). */
const CONCURRENCY = 16;

export class HeldNodeFeed {
  private readonly claims = new Map<string, string>();
  /** Nodes to tell; a node changed again while it is told is told again after. */
  private readonly due = new Set<string>();
  private readonly telling = new Set<string>();
  private stop?: AbortController;
  private done?: Promise<unknown>;

  constructor(private readonly o: HeldNodeFeedOptions) {}

  start(): void {
    if (this.stop) return;
    const stop = (this.stop = new AbortController());
    const { kube } = this.o;
    this.done = listWatch<V1Node>({
      kc: kube.config,
      path: '/api/v1/nodes', // literal: the RBAC test reads watched paths from the code
      list: () => listAllPages((page) => kube.core.listNode(page)),
      onList: (items) => {
        this.claims.clear();
        for (const n of items) {
          const name = n.metadata?.name;
          if (!name) continue;
          const claim = claimOf(n);
          if (claim !== undefined) this.claims.set(name, claim);
          if (toldOnList(n)) this.mark(name);
        }
        this.o.coordinators?.().then(
          (nodes) => nodes.forEach((n) => this.mark(n)),
          (err: unknown) => this.o.log(`held nodes: listing the running coordinators: ${err instanceof Error ? err.message : String(err)} (their backstop covers them)`, { level: 'warn' }),
        );
        return false;
      },
      onEvent: (type, n) => {
        const name = n.metadata?.name;
        if (!name) return false;
        const before = this.claims.get(name);
        const claim = type === 'DELETED' ? undefined : claimOf(n);
        if (claim === undefined) this.claims.delete(name);
        else this.claims.set(name, claim);
        if (concernsHolder(type, n, before)) this.mark(name);
        return false;
      },
      segmentMs: 300_000,
      segmentEndedBy: 'server',
      afterSegment: 'resume',
      listErrors: 'retry',
      backoff: { initialMs: 500, maxMs: 10_000 },
      signal: stop.signal,
      log: (msg: string) => this.o.log(msg, { level: 'warn', path: '/api/v1/nodes' }),
    });
  }

  async close(): Promise<void> {
    this.stop?.abort();
    await this.done;
  }

  private mark(node: string): void {
    this.due.add(node);
    this.pump();
  }

  private pump(): void {
    for (const node of this.due) {
      if (this.telling.size >= CONCURRENCY) return;
      if (this.telling.has(node)) continue;
      this.due.delete(node);
      this.telling.add(node);
      void this.tell(node).finally(() => {
        this.telling.delete(node);
        this.pump();
      });
    }
  }

  private async tell(node: string): Promise<void> {
    if (this.stop?.signal.aborted || !this.o.isLeader()) return;
    try {
      if (await this.o.tell(node)) this.o.stats.nodeSignals++;
    } catch (err) {
      // Its backstop (a look every half hour) covers a signal lost here.
      this.o.log(`held nodes: telling node ${node}'s coordinator it changed: ${err instanceof Error ? err.message : String(err)}`, { level: 'warn' });
    }
  }
}
