// Every node of a big CycleNodeRequest, from its workflow (#28): the cycleStatus answer lists a
// bounded set, and cycleNodes pages the nodes changed after a change number (≤ 500 a page). The
// bridge keeps what it paged between looks; `slipway status -o json` pages from the start.
import type { Client } from '@temporalio/client';
import type { CycleNodeStatus, CycleStatus } from '../workflows/cycle/types.js';
import { cycleNodesQuery, cycleStatusQuery } from '../workflows/messages.js';

/** The nodes paged so far: every node changed up to change number `changes`. */
export interface KnownNodes {
  changes: number;
  nodes: Map<string, CycleNodeStatus>;
}

type Handle = ReturnType<Client['workflow']['getHandle']>;
/** How each query is asked (the CLI gives each its own deadline: a closed request answers by replaying its history). */
/** A node's status from its own node cycle (the bridge's fallback when the journal has moved past it). */
type OwnStatus = (node: string) => Promise<CycleNodeStatus | undefined>;
type Ask = <T>(query: () => Promise<T>) => Promise<T>;

/**
 * The request's answer with every node in it: pages the nodes changed since `known` (from the start
 * when none, or when the request's counter went back) and returns the known nodes updated.
 */
export async function everyNode(h: Handle, known?: KnownNodes, ask: Ask = (q) => q(), own?: OwnStatus): Promise<{ status: CycleStatus; known?: KnownNodes }> {
  const answer = await ask(() => h.query(cycleStatusQuery));
  if (answer.changes === undefined) return { status: answer }; // a request that lists every node itself
  const k = !known || known.changes > answer.changes ? { changes: 0, nodes: new Map<string, CycleNodeStatus>() } : known;
  const paged = new Set<string>();
  let lost = false;
  while (k.changes < answer.changes) {
    const page = await ask(() => h.query(cycleNodesQuery, { changedAfter: k.changes }));
    if (page.lostUpTo !== undefined) lost = true;
    for (const n of page.nodes) {
      k.nodes.set(n.nodeName, n);
      paged.add(n.nodeName);
    }
    k.changes = page.nodes.at(-1)?.change ?? page.changes;
    if (!page.nodes.length) break;
  }
  // The answer was taken before the pages: a node in it is kept only when no page had it newer.
  for (const n of answer.nodes) if ((k.nodes.get(n.nodeName)?.change ?? -1) <= (n.change ?? 0)) k.nodes.set(n.nodeName, n);
  // Further behind than the request's journal: a node seen in flight whose end the journal no longer
  // holds is read from its own node cycle (its result, or its status while it still runs).
  if (lost && own) {
    for (const n of k.nodes.values()) {
      if (n.phase === 'Successful' || n.phase === 'Failed' || paged.has(n.nodeName)) continue;
      const mine = await own(n.nodeName);
      if (mine) k.nodes.set(n.nodeName, { ...mine, change: n.change });
    }
  }
  return { status: { ...answer, nodes: [...k.nodes.values()] }, known: k };
}
