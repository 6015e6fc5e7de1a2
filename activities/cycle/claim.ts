// A cycle's claim on a node (spec NM-7.5): before the cycle touches a node it writes
// slipway.dev/cycled-by, with a resourceVersion precondition, unless a NodeMaintenance holds the
// node (maintenance.slipway.dev/held-by). The maintenance's node coordinator does the reverse, so
// of two racing writes exactly one goes through and the other, re-reading on conflict, sees it.
import type { V1Node } from '@kubernetes/client-node';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL } from '../../api/node-maintenance.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { failpoint } from '../../shared/failpoint.js';
import { mergePatch } from '../../kube/patch.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';

/** A node a maintenance holds: the cycle leaves it alone for now. */
export interface HeldNode {
  node: string;
  /** The first holder (held-by is sorted). */
  maintenance: string;
  /** Its stage as the node's state label shows it (Cordoned: Cordon; Draining, Drained: Drain). */
  stage: 'Cordon' | 'Drain';
}

export type ClaimDecision =
  | { kind: 'held'; maintenance: string; stage: HeldNode['stage'] }
  | { kind: 'ours' }
  | { kind: 'write'; patch: { metadata: { resourceVersion: string; annotations: Record<string, string> } } };

/**
 * What the cycle does with `node`: hand off (a maintenance holds it), nothing (already ours), or
 * write the claim. A claim by another request is taken over: the node-group lock lets one request
 * cycle a group at a time, so such a claim is a leftover.
 */
export function claimDecision(node: V1Node, requestKey: string): ClaimDecision {
  const ann = node.metadata?.annotations ?? {};
  const holders = (ann[HELD_BY_ANNOTATION] ?? '').split(',').filter(Boolean);
  if (holders.length) return { kind: 'held', maintenance: holders[0]!, stage: node.metadata?.labels?.[MAINTENANCE_STATE_LABEL] === 'Cordoned' ? 'Cordon' : 'Drain' };
  if (ann[CYCLED_BY] === requestKey) return { kind: 'ours' };
  return { kind: 'write', patch: { metadata: { resourceVersion: node.metadata!.resourceVersion!, annotations: { [CYCLED_BY]: requestKey } } } };
}

export function createClaimActivities(kube: Kube) {
  /** Claims one node; re-reads on a conflict (kwok's heartbeats move the resourceVersion too). */
  async function claim(name: string, requestKey: string): Promise<'claimed' | 'gone' | HeldNode> {
    for (let attempt = 0; ; attempt++) {
      let node: V1Node;
      try {
        node = await kube.core.readNode({ name });
      } catch (err) {
        if (apiStatus(err) === 404) return 'gone';
        throw err;
      }
      const d = claimDecision(node, requestKey);
      if (d.kind === 'held') return { node: name, maintenance: d.maintenance, stage: d.stage };
      if (d.kind === 'ours') return 'claimed';
      try {
        await kube.core.patchNode({ name, body: d.patch }, mergePatch);
        return 'claimed';
      } catch (err) {
        if (apiStatus(err) === 404) return 'gone';
        if (apiStatus(err) !== 409 || attempt > 20) throw err;
      }
    }
  }

  return {
    /** Idempotent: claims each node no maintenance holds (NM-7.5); reports the held and the deleted ones. */
    async claimNodes(input: { requestKey: string; nodes: string[] }): Promise<{ claimed: string[]; gone: string[]; held: HeldNode[] }> {
      const out = { claimed: [] as string[], gone: [] as string[], held: [] as HeldNode[] };
      for (const name of input.nodes) {
        const r = await claim(name, input.requestKey);
        if (r === 'claimed') out.claimed.push(name);
        else if (r === 'gone') out.gone.push(name);
        else out.held.push(r);
      }
      failpoint('worker.cycle.after-claim');
      return out;
    },
  };
}
