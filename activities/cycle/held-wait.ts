// A CycleNodeRequest left with only nodes a NodeMaintenance holds (NM-7.6) waits for one of them in
// one long, heartbeating activity (issue 26: idle costs nothing): it returns when a held node's
// maintenance.slipway.dev/held-by clears or names another first holder, its stage changes, or the
// node goes, or after its window; the request then claims again. Each node is watched through the
// worker's per-node cache (node-cache.ts), as the maintenance's own node watches are.
import { Context } from '@temporalio/activity';
import type { V1Node } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { nodeByName, oneNode } from '../node-cache.js';
import { watchUntil } from '../../kube/watch.js';
import { claimDecision, type HeldNode } from './claim.js';

export interface HeldWaitInput {
  /** The held nodes as claimNodes reported them. */
  held: HeldNode[];
  /** The window: with nothing changed it answers `{}` then. */
  timeoutMs: number;
}

/** Why a held node no longer looks as claimNodes reported it (undefined: it does). */
export function heldChange(n: V1Node | undefined, h: HeldNode): string | undefined {
  if (!n) return 'deleted';
  const d = claimDecision(n, '');
  if (d.kind !== 'held') return 'released';
  if (d.maintenance !== h.maintenance || d.stage !== h.stage) return `now ${d.maintenance} (${d.stage})`;
  return undefined;
}

export function createHeldWaitActivities(kube: Kube) {
  return {
    /** The first held node that changed and how, or `{}` at the end of the window. */
    async waitForHeldNodes(input: HeldWaitInput): Promise<{ node?: string; changed?: string }> {
      const cancelled = Context.current().cancellationSignal;
      const stop = new AbortController();
      const onCancel = () => stop.abort(cancelled.reason);
      cancelled.addEventListener('abort', onCancel, { once: true });
      let first: { node: string; changed: string } | undefined;
      try {
        await Promise.all(
          input.held.map((h) =>
            watchUntil<V1Node>({
              ...nodeByName(kube, h.node),
              cached: oneNode(kube, h.node),
              done: (objects) => {
                const why = heldChange([...objects.values()][0], h);
                if (why && !first) first = { node: h.node, changed: why };
                if (why) stop.abort(); // one change answers: the other watches end
                return why !== undefined;
              },
              timeoutMs: input.timeoutMs,
              signal: stop.signal,
            }).catch((err: unknown) => {
              if (cancelled.aborted || !first) throw err;
            }),
          ),
        );
      } finally {
        cancelled.removeEventListener('abort', onCancel);
        stop.abort();
      }
      return first ?? {};
    },
  };
}
