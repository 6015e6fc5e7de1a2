// The NodeDisruptionBudget ledger: each budget's status (disrupted, waiting) is the durable record
// of who disrupts which node, written with the object's resourceVersion (a replace of the status
// subresource; on 409 re-read and decide again), so two workers, or a worker and its own retry,
// can never both take the last slot. Idempotent: a holder that asks again for a node it holds is
// granted at once; a release of what is not held is done. Leaks are repaired on every write: an
// entry whose Node is gone, or whose holder workflow has closed (asked of Temporal through the
// activity's client), is dropped; a waiter that has not asked again for a minute is dropped.
// The decision itself is pure: shared/disruption-budget.ts.
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { issueMessages } from '../../api/admission.js';
import { LabelSelector } from '../../api/label-selector.js';
import { MAX_LEDGER_ENTRIES, MAX_LISTED_ELSEWHERE, NODE_DISRUPTION_BUDGET, NodeDisruptionBudgetSpec, type LedgerEntry, type NodeDisruptionBudgetStatus } from '../../api/node-disruption-budget.js';
import { admit, disruptedNodes, elsewhereText, limitInForce, selects, type BudgetView, type NodeLabels } from '../../shared/disruption-budget.js';
import { budgetDisruptedNodes } from '../metrics.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { failpoint } from '../../shared/failpoint.js';

/** A waiter that has not asked again for this long is dropped (holders ask every few seconds). */
export const WAITER_STALE_MS = 60_000;
/** A waiter's lastSeen is rewritten only when older than this (fewer writes while it waits). */
const LAST_SEEN_REFRESH_MS = 20_000;
/** Holders of entries younger than this are not asked about (their workflow has just asked). */
const HOLDER_CHECK_AFTER_MS = 30_000;

interface BudgetObject {
  metadata: { name: string; resourceVersion: string; generation?: number };
  spec?: unknown;
  status?: NodeDisruptionBudgetStatus;
}

export interface DisruptionInput {
  /** The workflow ID that holds the nodes: a request's, a maintenance node coordinator's, a CLI drain's. */
  holder: string;
  nodes: string[];
}

/** What to release: the holder's entries for these nodes, or (no `nodes`) all of them. */
export interface ReleaseInput {
  holder: string;
  nodes?: string[];
}

export interface AcquireResult {
  /** Nodes the holder may disrupt now (every budget that selects them has recorded it). */
  granted: string[];
  /** The others, each with the first budget that has no room, in the words status shows. */
  waiting: Array<{ node: string; reason: string }>;
}

export type HolderState = 'running' | 'closed' | 'unknown';

export interface BudgetDeps {
  /** Whether a holder's workflow still runs; default: Temporal, through the activity's client. */
  holderState?: (holder: string) => Promise<HolderState>;
  now?: () => number;
  /** Most entries a ledger holds (disrupted + waiting); default MAX_LEDGER_ENTRIES (tests use a few). */
  maxLedgerEntries?: number;
}

const ledgerEntries = (st: NodeDisruptionBudgetStatus) => (st.disrupted?.length ?? 0) + (st.waiting?.length ?? 0);

/** Why a holder is refused a place in a full ledger (#28): the status must not grow with the fleet. */
export const ledgerFullReason = (budget: string, max: number) =>
  `waiting for NodeDisruptionBudget ${budget}: its ledger is full (${max} entries, disrupted and waiting); the node waits outside it until an entry leaves`;

/** Asks Temporal: a closed or unknown (never started, or gone) workflow is 'closed'; no answer is 'unknown'. */
export function holderStateFrom(client: Client): (holder: string) => Promise<HolderState> {
  return async (holder) => {
    try {
      const d = await client.workflow.getHandle(holder).describe();
      return d.status.name === 'RUNNING' ? 'running' : 'closed';
    } catch (err) {
      return (err as Error).name === 'WorkflowNotFoundError' ? 'closed' : 'unknown';
    }
  };
}

/** The activity's Temporal client, if it runs in a worker. */
async function holderStateFromTemporal(holder: string): Promise<HolderState> {
  let client;
  try {
    client = Context.current().client;
  } catch {
    return 'unknown'; // not in an activity (tests): leave the entry to the other repairs
  }
  return holderStateFrom(client)(holder);
}

/** The budget as the decision sees it: a spec that fails zod admits nothing it selects (fail closed). */
export function budgetView(o: BudgetObject): BudgetView {
  const ledger = { disrupted: o.status?.disrupted ?? [], waiting: o.status?.waiting ?? [] };
  const r = NodeDisruptionBudgetSpec.safeParse(o.spec);
  if (r.success) return { name: o.metadata.name, spec: r.data, ...ledger };
  const sel = LabelSelector.safeParse((o.spec as { nodeSelector?: unknown } | undefined)?.nodeSelector ?? {});
  return { name: o.metadata.name, invalid: issueMessages(r.error).join('; '), selector: sel.success ? sel.data : undefined, ...ledger };
}

export function createBudgetActivities(kube: Kube, deps: BudgetDeps = {}) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  const where = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural };
  const now = deps.now ?? Date.now;
  const holderState = deps.holderState ?? holderStateFromTemporal;
  const maxEntries = deps.maxLedgerEntries ?? MAX_LEDGER_ENTRIES;

  const listBudgets = async (): Promise<BudgetObject[]> => ((await api.listClusterCustomObject(where)) as { items: BudgetObject[] }).items;
  const listNodes = async (): Promise<NodeLabels[]> =>
    (await kube.core.listNode()).items.map((n) => ({ name: n.metadata!.name!, labels: n.metadata?.labels ?? {}, disrupted: n.spec?.unschedulable === true || !!n.metadata?.deletionTimestamp }));

  /**
   * Applies `change` to the budget's current status until the write goes through (re-read on 409).
   * `change` returns whether it changed anything; false writes nothing. Undefined: the budget is gone.
   */
  async function mutate(name: string, change: (o: BudgetObject) => boolean | Promise<boolean>): Promise<BudgetObject | undefined> {
    for (let attempt = 0; ; attempt++) {
      let o: BudgetObject;
      try {
        o = (await api.getClusterCustomObject({ ...where, name })) as BudgetObject;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        throw err;
      }
      o.status ??= {};
      // A spec edit is observed by the next write even when nothing else changed (GitOps health checks wait for it).
      const unobserved = o.metadata.generation !== undefined && o.status.observedGeneration !== o.metadata.generation;
      if (!(await change(o)) && !unobserved) return o;
      if (o.metadata.generation !== undefined) o.status.observedGeneration = o.metadata.generation;
      try {
        const written = (await api.replaceClusterCustomObjectStatus({ ...where, name, body: o })) as BudgetObject;
        budgetDisruptedNodes.set({ budget: name }, written.status?.disruptedNodes ?? 0);
        return written;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        if (apiStatus(err) !== 409 || attempt > 50) throw err;
      }
    }
  }

  /** Drops leaked entries: Node gone, holder workflow closed, waiter silent. True when it dropped any. */
  async function repair(o: BudgetObject, nodes: Set<string>, states: Map<string, Promise<HolderState>>, t: number): Promise<boolean> {
    const st = o.status!;
    const before = (st.disrupted?.length ?? 0) + (st.waiting?.length ?? 0);
    const state = (h: string) => {
      if (!states.has(h)) states.set(h, holderState(h));
      return states.get(h)!;
    };
    // A young entry is kept whatever this call's reads say: they may predate it (a node created after
    // the list, a holder that has just started), and a 409 re-read reuses them.
    const young = (e: LedgerEntry) => t - Date.parse(e.since) < HOLDER_CHECK_AFTER_MS;
    const keep = async (e: LedgerEntry) => {
      if (young(e)) return true;
      if (!nodes.has(e.node)) return false;
      return (await state(e.holder)) !== 'closed';
    };
    const disrupted = st.disrupted ?? [];
    const kept = await Promise.all(disrupted.map(keep));
    st.disrupted = disrupted.filter((_, i) => kept[i]);
    st.waiting = (st.waiting ?? []).filter((e) => young(e) || (nodes.has(e.node) && t - Date.parse(e.lastSeen ?? e.since) < WAITER_STALE_MS));
    return st.disrupted.length + st.waiting.length !== before;
  }

  /** limit, disruptedNodes (and disruptedElsewhere), message and the Valid condition, from the ledger and the Nodes; true when any changed. */
  function summarize(o: BudgetObject, view: BudgetView, nodes: NodeLabels[], t: number): boolean {
    const st = o.status!;
    const seen = () => JSON.stringify([st.limit?.nodes, st.limit?.reason, st.limit?.selectedNodes, st.disruptedNodes, st.disruptedElsewhere, st.message, st.conditions?.map((c) => [c.status, c.message, c.observedGeneration])]);
    const before = seen();
    const selected = nodes.filter((n) => selects(view, n)).length;
    const { all, elsewhere } = disruptedNodes(view, nodes);
    const d = all.size;
    const w = st.waiting?.length ?? 0;
    if (view.spec) {
      const limit = limitInForce(view.spec, selected, t);
      st.limit = { nodes: limit.nodes, selectedNodes: selected, reason: limit.reason, observedAt: new Date(t).toISOString() };
      const full = ledgerEntries(st) >= maxEntries ? `; the ledger is full (${maxEntries} entries): more holders wait outside it` : '';
      st.message = `${d} of ${limit.nodes} nodes disrupted${elsewhereText(elsewhere.length)}${w ? `; ${w} waiting` : ''}${full}`;
    } else {
      st.limit = { nodes: 0, selectedNodes: selected, reason: 'invalid spec: admits nothing', observedAt: new Date(t).toISOString() };
      st.message = `invalid: ${view.invalid}`;
    }
    st.disruptedNodes = d;
    if (elsewhere.length) st.disruptedElsewhere = elsewhere.sort().slice(0, MAX_LISTED_ELSEWHERE);
    else delete st.disruptedElsewhere;
    const valid = !view.invalid;
    const prev = st.conditions?.find((c) => c.type === 'Valid');
    const status = valid ? 'True' : 'False';
    st.conditions = [
      {
        type: 'Valid',
        status,
        reason: valid ? 'SpecValid' : 'InvalidSpec',
        message: valid ? 'the spec is valid' : `${view.invalid}; the budget admits nothing it selects until fixed`,
        lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : new Date(t).toISOString(),
        ...(o.metadata.generation !== undefined && { observedGeneration: o.metadata.generation }),
      },
    ];
    return seen() !== before;
  }

  const same = (holder: string, node: string) => (e: LedgerEntry) => e.holder === holder && e.node === node;

  return {
    /**
     * For each node in turn: records the holder in `waiting` of every budget that selects the node
     * (arrival order), then moves it to `disrupted` in each, in name order, if each has room (the
     * limit in force, first come first served, perZone). When one has none, the budgets taken in
     * this call give the slot back (to `waiting`, keeping the arrival time) and the node waits.
     * Short: the workflow asks again after a durable timer. Idempotent.
     */
    async acquireDisruption(input: DisruptionInput): Promise<AcquireResult> {
      const result: AcquireResult = { granted: [], waiting: [] };
      const [budgets, nodes] = await Promise.all([listBudgets(), listNodes()]);
      const names = new Set(nodes.map((n) => n.name));
      const byName = new Map(nodes.map((n) => [n.name, n]));
      const states = new Map<string, Promise<HolderState>>();
      const views = budgets.map(budgetView).sort((a, b) => a.name.localeCompare(b.name));
      for (const node of input.nodes) {
        const labels = byName.get(node);
        const matching = labels ? views.filter((v) => selects(v, labels)).map((v) => v.name) : [];
        const taken: string[] = [];
        let refused: string | undefined;
        for (const name of matching) {
          let reason: string | undefined;
          let grantedHere = false;
          let heldHere = false;
          const t = now();
          const o = await mutate(name, async (obj) => {
            reason = undefined; // decided afresh on every read (a 409 re-reads)
            grantedHere = false;
            const st = obj.status!;
            let changed = await repair(obj, names, states, t);
            const view = budgetView(obj);
            const mine = same(input.holder, node);
            const held = (heldHere = (st.disrupted ?? []).some(mine));
            if (!held) {
              const w = st.waiting ?? (st.waiting = []);
              const entry = w.find(mine);
              if (!entry && ledgerEntries(st) >= maxEntries) {
                reason = ledgerFullReason(name, maxEntries);
                return summarize(obj, view, nodes, t) || changed;
              }
              if (!entry) {
                w.push({ node, holder: input.holder, since: new Date(t).toISOString(), lastSeen: new Date(t).toISOString() });
                changed = true;
              } else if (t - Date.parse(entry.lastSeen ?? entry.since) > LAST_SEEN_REFRESH_MS) {
                entry.lastSeen = new Date(t).toISOString();
                changed = true;
              }
              const d = admit({ ...view, waiting: w }, nodes, input.holder, node, t);
              if (d.ok) {
                const at = w.findIndex(mine);
                w.splice(at, 1);
                (st.disrupted ??= []).push({ node, holder: input.holder, since: new Date(t).toISOString() });
                grantedHere = true;
                changed = true;
              } else reason = d.reason;
            }
            return summarize(obj, budgetView(obj), nodes, t) || changed;
          });
          if (!o) continue; // deleted meanwhile: it limits nothing
          if (grantedHere) failpoint('worker.budget.after-acquire-write');
          // Held already: granted by an earlier attempt of this call that a crash cut short. It is
          // given back with the rest if a later budget refuses, so all or none holds across retries.
          if (grantedHere || heldHere) taken.push(name);
          if (reason) {
            refused = reason;
            break;
          }
        }
        if (refused === undefined) {
          result.granted.push(node);
          continue;
        }
        // Give back what this call took for the node: all budgets, or none.
        for (const name of taken) {
          const t = now();
          await mutate(name, (obj) => {
            const st = obj.status!;
            const at = (st.disrupted ?? []).findIndex(same(input.holder, node));
            if (at < 0) return false;
            const [e] = st.disrupted!.splice(at, 1);
            const w = st.waiting ?? (st.waiting = []);
            w.push({ ...e!, lastSeen: new Date(t).toISOString() });
            w.sort((a, b) => Date.parse(a.since) - Date.parse(b.since));
            summarize(obj, budgetView(obj), nodes, t);
            return true;
          });
        }
        result.waiting.push({ node, reason: refused });
      }
      return result;
    },

    /**
     * Brings one budget's status up to date without taking or giving a slot: leaks repaired, the
     * limit in force (a schedule window opened or closed, nodes added), the Valid condition. Written
     * only when something changed. Called by the bridge on every change of the object and at resync.
     */
    async refreshDisruptionBudget(name: string): Promise<{ exists: boolean; invalid?: string }> {
      const nodes = await listNodes();
      const names = new Set(nodes.map((n) => n.name));
      const states = new Map<string, Promise<HolderState>>();
      const t = now();
      const o = await mutate(name, async (obj) => {
        const repaired = await repair(obj, names, states, t);
        return summarize(obj, budgetView(obj), nodes, t) || repaired;
      });
      if (!o) return { exists: false };
      const { invalid } = budgetView(o);
      return invalid === undefined ? { exists: true } : { exists: true, invalid };
    },

    /**
     * Removes the holder's entries for these nodes from every budget (disrupted and waiting); without
     * `nodes`, every entry the holder has (#28: a request's end releases what it holds, by holder).
     * Absent: done.
     */
    async releaseDisruption(input: ReleaseInput): Promise<{ released: number }> {
      const only = input.nodes ? new Set(input.nodes) : undefined;
      const budgets = await listBudgets();
      let released = 0;
      const t = now();
      let nodes: NodeLabels[] | undefined;
      for (const b of budgets) {
        const mine = (e: LedgerEntry) => e.holder === input.holder && (!only || only.has(e.node));
        if (![...(b.status?.disrupted ?? []), ...(b.status?.waiting ?? [])].some(mine)) continue;
        nodes ??= await listNodes();
        const ns = nodes;
        await mutate(b.metadata.name, (o) => {
          const st = o.status!;
          const before = (st.disrupted?.length ?? 0) + (st.waiting?.length ?? 0);
          st.disrupted = (st.disrupted ?? []).filter((e) => !mine(e));
          st.waiting = (st.waiting ?? []).filter((e) => !mine(e));
          const n = before - st.disrupted.length - st.waiting.length;
          if (!n) return false;
          released += n;
          summarize(o, budgetView(o), ns, t);
          return true;
        });
        if (released) failpoint('worker.budget.after-release-write');
      }
      return { released };
    },
  };
}
