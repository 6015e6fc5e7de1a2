// The Node side of a maintenance (spec §6): cordon, the state label, the held-by and status
// annotations, and their removal on release with the pre-maintenance schedulability restored.
// Only the node coordinator workflow calls these, so there is one writer per node; each write is a
// merge patch carrying the resourceVersion it was computed from (a precondition): the node is read
// from the worker's node cache (activities/node-cache.ts) and re-read by a GET on conflict.
// A node a CycleNodeRequest has claimed (slipway.dev/cycled-by) is not held: the first claim wins (NM-7.5).
// The node conditions (NM-6.4) follow each write, best-effort: a failure is logged, never fails the hold.
import { Context } from '@temporalio/activity';
import type { V1Node } from '@kubernetes/client-node';
import { maintenanceRequiredLabel, requiredComponents } from '../../api/dependency-locks.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL, MAINTENANCE_STATUS_ANNOTATION, WAS_UNSCHEDULABLE_ANNOTATION } from '../../api/node-maintenance.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { claimantName } from '../cycle/markers.js';
import { heldBy, maintenanceConditions, nodeConditionsPatch } from './node-conditions.js';
import { failpoint } from '../../shared/failpoint.js';
import { freshNode, nodeCache, readNode } from '../node-cache.js';
import { mergePatch, strategicMergePatch } from '../../kube/patch.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { createBudgetActivities } from '../budget/index.js';

export type NodeMaintenanceState = 'Cordoned' | 'Draining' | 'Drained';

export interface HoldInput {
  node: string;
  /** Names of the maintenances holding the node; empty: release it. */
  holders: string[];
  state?: NodeMaintenanceState;
  /** The node-level status (NM-6.3), written as JSON. */
  status?: Record<string, unknown>;
  /**
   * The coordinator's NodeDisruptionBudget slot (issue 15) in the same activity as the write (#27
   * hand-over: one task fewer each way). A hold takes it first and writes nothing when refused; a
   * release gives it back once the restoring write has landed.
   */
  slot?: { holder: string };
}

export interface HoldResult {
  exists: boolean;
  /** Someone uncordoned a held node: it was cordoned again (NM-2.5). */
  reverted: boolean;
  /** Released and left cordoned because it was unschedulable before the maintenance. */
  keptCordoned?: boolean;
  /** "ns/name" of the CycleNodeRequest that claimed the node: the hold was refused, nothing written (NM-7.5). */
  claimedBy?: string;
  /** A hold with `slot`: the budget refused it (its reason); the node was not read nor written. */
  slotRefused?: string;
}

type Patch = { metadata: { resourceVersion: string; labels: Record<string, string | null>; annotations: Record<string, string | null> }; spec?: { unschedulable: boolean | null } };

/** The patch that brings the node to the wanted state, or undefined when it is there already. */
export function nodeStatePatch(node: V1Node, input: HoldInput): { patch?: Patch; reverted: boolean; keptCordoned?: boolean; claimedBy?: string } {
  const labels = node.metadata?.labels ?? {};
  const ann = node.metadata?.annotations ?? {};
  // A cycle claimed it first: no hold (a release still clears whatever is ours, which is nothing).
  const claim = ann[CYCLED_BY];
  if (input.holders.length && claim) return { reverted: false, claimedBy: claimantName(claim) };
  const cordoned = node.spec?.unschedulable === true;
  const labelsOut: Record<string, string | null> = {};
  const annOut: Record<string, string | null> = {};
  let unschedulable: boolean | null | undefined;
  let reverted = false;
  let keptCordoned: boolean | undefined;
  const set = (target: Record<string, string | null>, current: Record<string, string>, k: string, v: string | null) => {
    if ((current[k] ?? null) !== v) target[k] = v;
  };
  if (input.holders.length) {
    const heldBefore = ann[HELD_BY_ANNOTATION] !== undefined;
    if (!heldBefore && cordoned && ann[WAS_UNSCHEDULABLE_ANNOTATION] === undefined) set(annOut, ann, WAS_UNSCHEDULABLE_ANNOTATION, 'true');
    if (!cordoned) {
      unschedulable = true;
      reverted = heldBefore;
    }
    set(labelsOut, labels, MAINTENANCE_STATE_LABEL, input.state ?? 'Cordoned');
    set(annOut, ann, HELD_BY_ANNOTATION, [...input.holders].sort().join(','));
    if (input.status) set(annOut, ann, MAINTENANCE_STATUS_ANNOTATION, JSON.stringify(input.status));
  } else {
    const wasUnschedulable = ann[WAS_UNSCHEDULABLE_ANNOTATION] === 'true';
    const ours = ann[HELD_BY_ANNOTATION] !== undefined;
    if (ours && cordoned && !wasUnschedulable) unschedulable = null;
    keptCordoned = ours && wasUnschedulable;
    for (const k of [HELD_BY_ANNOTATION, MAINTENANCE_STATUS_ANNOTATION, WAS_UNSCHEDULABLE_ANNOTATION]) set(annOut, ann, k, null);
    set(labelsOut, labels, MAINTENANCE_STATE_LABEL, null);
    // A drain that ended without clearing them (failed, cancelled) must not leave dependents acting on them (NM-5.10).
    for (const c of requiredComponents(labels)) set(labelsOut, labels, maintenanceRequiredLabel(c), null);
  }
  if (!Object.keys(labelsOut).length && !Object.keys(annOut).length && unschedulable === undefined) return { reverted, keptCordoned };
  const patch: Patch = { metadata: { resourceVersion: node.metadata!.resourceVersion!, labels: labelsOut, annotations: annOut } };
  if (unschedulable !== undefined) patch.spec = { unschedulable };
  return { patch, reverted, keptCordoned };
}

/** Logged, not thrown: the conditions are best-effort (NM-6.4). */
function conditionsNotWritten(node: string, err: unknown): void {
  const message = 'node conditions not written (best-effort; the label and annotations are the contract)';
  try {
    Context.current().log.warn(message, { node, error: String(err) });
  } catch {
    console.warn(message, node, String(err)); // called outside an activity (a test)
  }
}

export function createNodeStateActivities(kube: Kube) {
  const budget = createBudgetActivities(kube);
  /** Brings the node's maintenance conditions in line with the hold just written (NM-6.4); re-read on conflict. */
  async function writeConditions(node: V1Node, input: HoldInput, released: string[]): Promise<void> {
    const wanted = maintenanceConditions(input.holders, input.state, released);
    for (let attempt = 0; ; attempt++) {
      const body = nodeConditionsPatch(node, wanted, new Date());
      if (!body) return;
      try {
        nodeCache(kube, input.node).wrote(node, await kube.core.patchNodeStatus({ name: input.node, body }, strategicMergePatch));
        return;
      } catch (err) {
        if (apiStatus(err) !== 409 || attempt >= 5) throw err; // a heartbeat moved the resourceVersion
      }
      const fresh = await freshNode(kube, input.node);
      if (!fresh) return;
      node = fresh;
    }
  }

  /** The write itself; `landed` runs once the node shows the state (beside the best-effort conditions). */
  async function write(input: HoldInput, landed: () => Promise<unknown>): Promise<HoldResult> {
    for (let attempt = 0; ; attempt++) {
      // A hold reads the cached node first (its resourceVersion is the patch's precondition; a hold
      // a stale copy finds already written is looked at again on the coordinator's next look).
      // A release, a claim and every read after a conflict are GETs: a release that a stale copy
      // finds done would write nothing and never be retried, and a claim refuses the hold.
      const cached = attempt === 0 && input.holders.length > 0;
      const node = cached ? await readNode(kube, input.node) : await freshNode(kube, input.node);
      if (!node) return { exists: false, reverted: false };
      const { patch, reverted, keptCordoned, claimedBy } = nodeStatePatch(node, input);
      if (claimedBy && cached) continue;
      if (claimedBy) return { exists: true, reverted, claimedBy };
      const released = input.holders.length ? [] : heldBy(node);
      let written = node;
      if (patch) {
        try {
          written = await kube.core.patchNode({ name: input.node, body: patch }, mergePatch);
          nodeCache(kube, input.node).wrote(node, written);
        } catch (err) {
          if (apiStatus(err) === 404) return { exists: false, reverted: false };
          if (apiStatus(err) !== 409 || attempt > 20) throw err; // kwok's heartbeats move the resourceVersion: read again
          continue;
        }
      }
      if (patch?.spec?.unschedulable === true) failpoint('worker.maintenance.after-cordon');
      if (patch?.spec && patch.spec.unschedulable === null) failpoint('worker.maintenance.after-uncordon');
      await Promise.all([writeConditions(written, input, released).catch((err: unknown) => conditionsNotWritten(input.node, err)), landed()]);
      return { exists: true, reverted, keptCordoned };
    }
  }

  return {
    /**
     * Idempotent: brings the node's maintenance state to `input` (hold, or release when holders is
     * empty), with the budget slot of `input.slot` taken before a hold and given back after a release
     * (a retry asks again for what it holds, granted, or releases what is released: both no-ops).
     */
    async writeMaintenanceNodeState(input: HoldInput): Promise<HoldResult> {
      const { slot, ...hold } = input;
      if (!slot) return write(hold, async () => undefined);
      const ask = { holder: slot.holder, nodes: [input.node] };
      if (!hold.holders.length) {
        let given = false;
        const giveBack = async () => {
          await budget.releaseDisruption(ask);
          given = true;
        };
        const r = await write(hold, giveBack);
        if (!given) await giveBack(); // nothing to write (gone, or restored already): the slot goes back all the same
        return r;
      }
      const refused = (await budget.acquireDisruption(ask)).waiting.find((w) => w.node === input.node);
      if (refused) return { exists: true, reverted: false, slotRefused: refused.reason };
      return write(hold, async () => undefined);
    },
  };
}
