// The waits of a held maintenance (issue 26 §1: idle costs nothing). Each is one long activity that
// heartbeats (heartbeats add no history) and returns only when something its workflow acts on has
// changed, or after RENEW_MS as a safety net; the workflow's history grows with the changes, not
// with the time it holds. Built on watchUntil and the worker's caches (node-cache.ts, object-cache.ts).
//   - watchMaintenanceNode: the node coordinator's look (an uncordon to revert, NM-2.5; a cycle's
//     claim coming or going, NM-7.7; the node deleted or back).
//   - watchMaintenanceSelection: the maintenance's live membership (NM-2.6): the selection changed.
// The coordinator's wait for a NodeDisruptionBudget slot is every holder's: activities/budget/wait.ts.
import { Context } from '@temporalio/activity';
import type { V1Node } from '@kubernetes/client-node';
import { matchesNodeSelector } from '../../api/node-selector.js';
import { HELD_BY_ANNOTATION, type NodeSelector } from '../../api/node-maintenance.js';
import type { Kube } from '../../kube/client.js';
import { claimantName } from '../cycle/markers.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { cacheRegistry, ObjectCache, type CacheListener } from '../../kube/object-cache.js';
import { nodeByName, oneNode } from '../node-cache.js';
import { watchUntil } from '../../kube/watch.js';
import { listAllPages } from '../../kube/listwatch.js';
import { maintenanceMaxNodes, selectionOf, type Selection } from './select.js';

/** The longest a watch waits without a change before it returns anyway (the workflow re-arms it). */
export const RENEW_MS = 20 * 60_000;

export interface NodeWatchInput {
  node: string;
  /** The node exists as far as the coordinator knows. */
  exists: boolean;
  /** The coordinator holds it (cordoned by its write): an uncordon or a lost held-by ends the wait. */
  held: boolean;
  /** "ns/name" of the CycleNodeRequest that claimed it, as last seen. */
  claimedBy?: string;
  /** Test hook: the renewal period. */
  renewMs?: number;
}

export interface SelectionWatchInput {
  nodeSelector: NodeSelector;
  /** The selection as last read: the wait ends when the selected names or the node total differ. */
  nodes: string[];
  totalNodes: number;
  /** spec.rollout.partitionBy: the answer carries each node's partition. */
  partitionBy?: string;
  /** A rolling maintenance's name: the answer carries who else holds each node, and a change there ends the wait too. */
  holder?: string;
  /** Who else held each node, as last read (with holder). */
  elsewhere?: Record<string, string>;
  renewMs?: number;
}

/** Every Node of the cluster (names and labels are what selection reads), shared by the worker's selection waits. */
const allNodes = cacheRegistry<Kube, V1Node>(
  (kube, _key, onStopped) =>
    new ObjectCache<V1Node>({
      kc: kube.config,
      path: '/api/v1/nodes', // literal: the RBAC test reads watched paths from the code
      list: () => listAllPages((page) => kube.core.listNode(page)),
      key: (n) => n.metadata?.name,
      idleMs: 120_000,
      segmentMs: 5 * 60_000,
      onStopped,
    }),
);

/** Why the node differs from what the coordinator expects (undefined: it does not). */
export function nodeChange(n: V1Node | undefined, w: Omit<NodeWatchInput, 'renewMs'>): string | undefined {
  if (!n) return w.exists ? 'deleted' : undefined;
  if (!w.exists) return 'exists again';
  const claim = n.metadata?.annotations?.[CYCLED_BY];
  if ((claim ? claimantName(claim) : undefined) !== w.claimedBy) return 'claim changed';
  if (!w.held) return undefined;
  if (n.spec?.unschedulable !== true) return 'uncordoned';
  if (n.metadata?.annotations?.[HELD_BY_ANNOTATION] === undefined) return 'held-by removed';
  return undefined;
}

const sameSelection = (a: Selection, w: SelectionWatchInput) =>
  a.totalNodes === w.totalNodes && a.nodes.join('\n') === w.nodes.join('\n') && (w.holder === undefined || sameHolders(a.elsewhere ?? {}, w.elsewhere ?? {}));
const sameHolders = (a: Record<string, string>, b: Record<string, string>) => Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

export function createMaintenanceWatchActivities(kube: Kube) {
  const signal = () => Context.current().cancellationSignal;

  return {
    /** Returns when the node no longer looks as the coordinator left it, or after the renewal period: `changed` says why. */
    async watchMaintenanceNode(input: NodeWatchInput): Promise<{ changed?: string }> {
      let why: string | undefined;
      await watchUntil<V1Node>({
        ...nodeByName(kube, input.node),
        cached: oneNode(kube, input.node),
        done: (objects) => (why = nodeChange([...objects.values()][0], input)) !== undefined,
        timeoutMs: input.renewMs ?? RENEW_MS,
        signal: signal(),
      });
      return why ? { changed: why } : {};
    },

    /** Returns the selection once it differs from `input`, or after the renewal period (then `changed` is false). */
    async watchMaintenanceSelection(input: SelectionWatchInput): Promise<{ changed: boolean; selection: Selection }> {
      let last: Selection | undefined;
      const cache = allNodes(kube);
      const view = (objects: Map<string, V1Node>) => (last = selectionOf(input.nodeSelector, [...objects.values()], input));
      await watchUntil<V1Node>({
        kc: kube.config,
        path: '/api/v1/nodes',
        list: async () => {
          const l = await kube.core.listNode();
          return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
        },
        cached: { whenSynced: (ms) => cache.whenSynced(ms), subscribe: (l: CacheListener<V1Node>) => cache.subscribe(l) },
        done: (objects) => !sameSelection(view(objects), input),
        timeoutMs: input.renewMs ?? RENEW_MS,
        segmentMs: 5 * 60_000,
        signal: signal(),
      });
      const selection = last ?? { nodes: input.nodes, totalNodes: input.totalNodes, controlPlaneNodes: 0, controlPlaneSelected: 0 };
      return { changed: !sameSelection(selection, input), selection: { ...selection, maxNodes: maintenanceMaxNodes() } };
    },
  };
}
