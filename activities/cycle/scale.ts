// Surge-first replacement: mark and detach the batch (the group launches replacements), wait for
// replacements that are Ready and healthy, protect them from cluster-autoscaler while needed,
// terminate old instances, and heal (re-attach, uncordon) on failure. Every step is idempotent.
import { Context, heartbeat } from '@temporalio/activity';
import type { V1Node } from '@kubernetes/client-node';
import { matchesSelector, selectorToString, type LabelSelector } from '../../api/label-selector.js';
import type { HealthCheck } from '../../api/cycle-node-request.js';
import { parseDuration } from '../../api/duration.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { watchUntil } from '../../kube/watch.js';
import type { NodeGroupProvider } from '../providers/types.js';
import { mapLimit } from '../drain/rate-limit.js';
import { runHealthChecks } from './health.js';
import { CLEAR_DETACHED_FROM_GROUP, DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import { lifecycleHooks } from '../../api/lifecycle-hooks.js';
import { CA_SCALE_DOWN_DISABLED } from './markers.js';
import { groupNodeOf, type GroupNode } from './resolve.js';
import { setUnschedulable } from '../drain/node.js';
import { failpoint } from '../../shared/failpoint.js';
import { mergePatch } from '../../kube/patch.js';
import { CA_ANNOTATION_OWNER, CYCLED_BY } from '../../api/cycle-node-request.js';

async function patchNode(kube: Kube, name: string, body: object): Promise<boolean> {
  try {
    await kube.core.patchNode({ name, body }, mergePatch);
    return true;
  } catch (err) {
    if (apiStatus(err) === 404) return false;
    throw err;
  }
}

/**
 * Reads the node; while pre-terminate hooks are on it, returns their owners and deletes nothing.
 * Otherwise deletes it with the resourceVersion it judged, so a hook added in between makes the
 * delete fail (409) and the node is read again.
 */
async function deleteUnlessHooked(kube: Kube, name: string): Promise<string[] | undefined> {
  for (let attempt = 0; ; attempt++) {
    const node = await kube.core.readNode({ name });
    const hooks = lifecycleHooks(node.metadata?.annotations, 'pre-terminate').owners;
    if (hooks.length) return hooks;
    try {
      await kube.core.deleteNode({ name, body: { preconditions: { resourceVersion: node.metadata!.resourceVersion!, uid: node.metadata!.uid! } } });
      return undefined;
    } catch (err) {
      if (apiStatus(err) !== 409 || attempt >= 5) throw err; // changed since the read: look again
    }
  }
}

export interface ReplacementInput {
  provider: string;
  groups: string[];
  selector: LabelSelector;
  /**
   * Nodes never counted as new though created about when the batch began: the batch's own and the
   * last batches' replacements (#28: bounded by the nodes in flight, not a list of the fleet).
   */
  exclude: string[];
  /** Wall-clock ms when the batch was detached: replacements are nodes created after it. */
  sinceMs: number;
  /** How many new Ready, healthy nodes the batch needs. */
  needed: number;
  healthChecks: HealthCheck[];
  timeoutMs: number;
}

export function createScaleActivities(kube: Kube, providers: Record<string, NodeGroupProvider>) {
  const provider = (name: string) => {
    const p = providers[name];
    if (!p) throw new Error(`unknown provider ${name}`);
    return p;
  };
  return {
    /** Marks each node (so a later run can re-attach it) and detaches it without shrinking its group. */
    async detachNodes(input: { provider: string; requestKey: string; nodes: GroupNode[] }): Promise<{ detached: string[]; gone: string[] }> {
      // The nodes are independent: a few at a time (each is a read and a write on the cloud side).
      const outcomes = await mapLimit(input.nodes, 4, async (n) => {
        const marked = await patchNode(kube, n.name, { metadata: { annotations: { [DETACHED_FROM_GROUP]: n.nodeGroup, [CYCLED_BY]: input.requestKey } } });
        if (!marked) return { name: n.name, gone: true }; // removed by someone else: nothing to cycle
        await provider(input.provider).detachInstance(n.providerID, n.nodeGroup);
        heartbeat(n.name);
        failpoint('worker.cycle.mid-detach');
        return { name: n.name, gone: false };
      });
      failpoint('worker.cycle.after-detach');
      return { detached: outcomes.filter((o) => !o.gone).map((o) => o.name), gone: outcomes.filter((o) => o.gone).map((o) => o.name) };
    },

    /**
     * Waits until the groups are back to full strength with new nodes: every instance InService, and
     * `needed` nodes created after the detach that are Ready now (a replacement that died does not
     * count) and pass the health checks. Watches Nodes; re-describes the groups on each change.
     */
    async waitForReplacements(input: ReplacementInput): Promise<{ ready: boolean; newNodes: string[]; message: string }> {
      const p = provider(input.provider);
      const known = new Set(input.exclude);
      let message = 'waiting for replacement nodes';
      let fresh: GroupNode[] = [];
      const deadline = Date.now() + input.timeoutMs;
      // Ready nodes created since the detach (its second: creationTimestamp has no finer grain), not
      // excluded: what the group's replacements look like.
      const candidates = (nodes: Iterable<V1Node>) =>
        [...nodes]
          .filter((n) => !known.has(n.metadata!.name!) && matchesSelector(input.selector, n.metadata?.labels) && !n.metadata?.deletionTimestamp)
          .map(groupNodeOf)
          .filter((n) => n.ready && n.createdAtMs >= input.sinceMs - 1000);
      const check = async (nodes: V1Node[]): Promise<boolean> => {
        const groups = await p.describeGroups(input.groups);
        const notInService = groups.flatMap((g) => g.instances).filter((i) => i.lifecycle !== 'InService');
        const instances = new Set(groups.flatMap((g) => g.instances.map((i) => i.providerID)));
        fresh = candidates(nodes).filter((n) => instances.has(n.providerID));
        if (notInService.length) message = `waiting for ${notInService.length} instances to be InService`;
        else if (fresh.length < input.needed) message = `waiting for replacement nodes: ${fresh.length}/${input.needed} Ready`;
        else return true;
        return false;
      };
      // Only the selected nodes: a replacement must match the selector to count anyway.
      const labelSelector = selectorToString(input.selector);
      let nodes = (await kube.core.listNode({ labelSelector })).items;
      while (!(await check(nodes))) {
        if (Date.now() >= deadline) return { ready: false, newNodes: fresh.map((n) => n.name), message: `${message} (timed out)` };
        // Look again as soon as a replacement registers or turns Ready (watched), and at least every
        // 5 s: the cloud group's own state (InService) changes without a Node event.
        const seen = candidates(nodes).length;
        const { objects } = await watchUntil<V1Node>({
          kc: kube.config,
          path: '/api/v1/nodes',
          list: async () => {
            const l = await kube.core.listNode({ labelSelector });
            return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
          },
          labelSelector,
          done: (current) => candidates(current.values()).length !== seen,
          timeoutMs: Math.min(5000, Math.max(0, deadline - Date.now())),
          onTick: () => heartbeat(message),
          signal: Context.current().cancellationSignal,
        });
        nodes = [...objects.values()];
        heartbeat(message);
        failpoint('worker.cycle.waiting-replacements');
      }
      const newNodes = fresh.slice(0, Math.max(input.needed, fresh.length)).map((n) => n.name);
      if (input.healthChecks.length) {
        const waitMs = Math.max(...input.healthChecks.map((h) => parseDuration(h.waitPeriod)));
        const result = await runHealthChecks(fresh, input.healthChecks, Math.min(waitMs, Math.max(0, deadline - Date.now())));
        if (!result.passed) return { ready: false, newNodes, message: `replacement nodes did not pass their health checks: ${result.failures.join('; ')}` };
      }
      failpoint('worker.cycle.after-replacements-ready');
      return { ready: true, newNodes, message: `${newNodes.length} replacement nodes Ready and healthy` };
    },

    /** Keeps cluster-autoscaler off the new nodes while the batch drains (only where we set it). */
    async protectFromScaleDown(input: { nodes: string[]; requestKey: string }): Promise<string[]> {
      const marked = await mapLimit(input.nodes, 8, async (name) => {
        const node = await kube.core.readNode({ name }).catch((err) => (apiStatus(err) === 404 ? undefined : Promise.reject(err)));
        if (!node) return undefined;
        const a = node.metadata?.annotations ?? {};
        if (a[CA_SCALE_DOWN_DISABLED] !== undefined && a[CA_ANNOTATION_OWNER] === undefined) return undefined; // someone else's: leave it
        await patchNode(kube, name, { metadata: { annotations: { [CA_SCALE_DOWN_DISABLED]: 'true', [CA_ANNOTATION_OWNER]: input.requestKey } } });
        return name;
      });
      failpoint('worker.cycle.after-protect');
      return marked.filter((n): n is string => n !== undefined);
    },

    /** Removes our scale-down-disabled annotations (from named nodes, or every node we marked for this request). */
    async releaseScaleDown(input: { requestKey: string; nodes?: string[] }): Promise<string[]> {
      const all = await kube.core.listNode();
      const released: string[] = [];
      for (const n of all.items) {
        const a = n.metadata?.annotations ?? {};
        if (a[CA_ANNOTATION_OWNER] !== input.requestKey) continue;
        if (input.nodes && !input.nodes.includes(n.metadata!.name!)) continue;
        await patchNode(kube, n.metadata!.name!, { metadata: { annotations: { [CA_SCALE_DOWN_DISABLED]: null, [CA_ANNOTATION_OWNER]: null } } });
        released.push(n.metadata!.name!);
      }
      failpoint('worker.cycle.after-release-scale-down');
      return released;
    },

    /**
     * Healing: every instance not terminated goes back into its group (even when its Node object is
     * already gone), and every Node still there is uncordoned and then loses our markers: the claim
     * goes last, so a NodeMaintenance waiting for the node finds it uncordoned and cordons it for
     * itself, with nothing of the cycle's left to undo its cordon (NM-7.7).
     */
    async healNodes(input: { provider: string; requestKey: string; nodes: GroupNode[] }): Promise<{ reattached: string[] }> {
      const p = provider(input.provider);
      const reattached: string[] = [];
      for (const n of input.nodes) {
        if ((await p.instancesExist([n.providerID])).has(n.providerID)) {
          const r = await p.attachInstance(n.providerID, n.nodeGroup);
          if (!r.alreadyAttached) reattached.push(n.name);
        }
        failpoint('worker.cycle.mid-heal');
        await setUnschedulable(kube, n.name, false);
        await patchNode(kube, n.name, { metadata: { annotations: { ...CLEAR_DETACHED_FROM_GROUP, [CYCLED_BY]: null } } });
      }
      failpoint('worker.cycle.after-heal');
      return { reattached };
    },

    /**
     * Deletes the Node. With `unlessHooked` (a cycle taking a drained node away) it deletes nothing
     * while pre-terminate hooks are on the node and returns their owners instead.
     */
    async deleteNode(name: string, opts?: { unlessHooked?: boolean }): Promise<{ existed: boolean; hooks?: string[] }> {
      try {
        const hooks = opts?.unlessHooked ? await deleteUnlessHooked(kube, name) : void (await kube.core.deleteNode({ name }));
        if (hooks?.length) return { existed: true, hooks };
        failpoint('worker.cycle.after-node-delete');
        return { existed: true };
      } catch (err) {
        if (apiStatus(err) === 404) return { existed: false };
        throw err;
      }
    },

    async terminateInstance(input: { provider: string; providerID: string }): Promise<{ alreadyGone: boolean }> {
      const r = await provider(input.provider).terminateInstance(input.providerID);
      failpoint('worker.cycle.after-terminate');
      return r;
    },

    async instanceExists(input: { provider: string; providerID: string }): Promise<boolean> {
      return (await provider(input.provider).instancesExist([input.providerID])).has(input.providerID);
    },
  };
}
