// The bridge's metrics (registered in bridgeRegistry, shared/metrics.ts; served by main.ts at
// /metrics). Most are gauges read from the leader's caches at scrape time: the statuses it mirrors
// already say how many requests are in each phase, so nothing is counted twice and a restarted
// bridge is right at once. Counters and histograms that need a moment (a node's cycle ending, a
// drain's length, the mirror's lag) are observed as the status mirror sees the change; they count
// only what this process saw begin, so a new leader does not count old cycles again.
import { Counter, Gauge, Histogram } from 'prom-client';
import { bridgeRegistry } from '../../shared/metrics.js';
import type { NodeDisruptionBudgetStatus } from '../../api/node-disruption-budget.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import type { BudgetKubeObject } from './budget/reconciler.js';
import type { NodeMaintenanceObject } from './maintenance/objects.js';
import type { CycleNodeRequestObject } from './cycle/objects.js';
import { drainBlockers } from '../../shared/drain-blockers.js';

/** What a scrape reads from the running term (only the leader runs one). */
export interface BridgeView {
  requests(): Iterable<CycleNodeRequestObject>;
  maintenances(): Iterable<NodeMaintenanceObject>;
  budgets(): Iterable<BudgetKubeObject>;
  /** Keys waiting or being reconciled, per kind. */
  queueDepth(): Record<string, number>;
  synced(): boolean;
}

let view: BridgeView | undefined;
let leader: () => boolean = () => false;

/** The term now running (undefined when it stops); called by Bridge.start/stop. */
export function setBridgeView(v: BridgeView | undefined, current?: BridgeView): void {
  if (v === undefined && current !== undefined && view !== current) return; // a newer term took over
  view = v;
}

/** How to tell whether this replica leads (startBridge hands in its elector's). */
export function setLeaderCheck(isLeader: () => boolean): void {
  leader = isLeader;
}

const REGISTERS = [bridgeRegistry];

new Gauge({
  name: 'slipway_bridge_leader',
  help: '1 while this replica holds the slipway-bridge Lease and reconciles.',
  registers: REGISTERS,
  collect() {
    this.set(leader() ? 1 : 0);
  },
});

new Gauge({
  name: 'slipway_bridge_caches_synced',
  help: '1 once every cache of the running term holds a full list (0 while not leading).',
  registers: REGISTERS,
  collect() {
    this.set(view?.synced() ? 1 : 0);
  },
});

/** Sets a labelled gauge from counts, with every known label value present (0 when none). */
function setAll<L extends string>(g: Gauge<L>, label: L, known: readonly string[], counts: Map<string, number>): void {
  g.reset();
  for (const k of new Set([...known, ...counts.keys()])) g.set({ [label]: k } as Record<L, string>, counts.get(k) ?? 0);
}

const REQUEST_PHASES = ['Pending', 'Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination', 'Successful', 'Healing', 'Failed'];
const NODE_PHASES = ['Pending', 'WaitingPods', 'RemovingLabelsFromPods', 'DrainingPods', 'DeletingNode', 'TerminatingNode', 'Successful', 'Failed'];
const STAGES = ['Idle', 'Cordon', 'Drain', 'Complete'];

new Gauge({
  name: 'slipway_cycle_requests',
  help: 'CycleNodeRequests by status.phase (as the leader last mirrored it).',
  labelNames: ['phase'] as const,
  registers: REGISTERS,
  collect() {
    const counts = new Map<string, number>();
    for (const r of view?.requests() ?? []) {
      const p = r.status?.phase ?? 'Pending';
      counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    setAll(this, 'phase', view ? REQUEST_PHASES : [], counts);
  },
});

new Gauge({
  name: 'slipway_cycle_nodes',
  help: "Nodes of existing CycleNodeRequests by their phase (status.nodesByPhase; status.nodes[] lists only some): in flight, cycled (Successful), failed.",
  labelNames: ['phase'] as const,
  registers: REGISTERS,
  collect() {
    const counts = new Map<string, number>();
    const add = (phase: string, n: number) => counts.set(phase, (counts.get(phase) ?? 0) + n);
    for (const r of view?.requests() ?? []) {
      const byPhase = r.status?.nodesByPhase;
      if (byPhase) for (const [phase, n] of Object.entries(byPhase)) add(phase, n);
      else for (const n of r.status?.nodes ?? []) add(n.phase, 1);
    }
    setAll(this, 'phase', view ? NODE_PHASES : [], counts);
  },
});

new Gauge({
  name: 'slipway_maintenances',
  help: 'NodeMaintenances by the stage their workflow last started (status.stageStatuses; Idle before any).',
  labelNames: ['stage'] as const,
  registers: REGISTERS,
  collect() {
    const counts = new Map<string, number>();
    for (const m of view?.maintenances() ?? []) {
      const s = m.status?.stageStatuses?.at(-1)?.name ?? 'Idle';
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    setAll(this, 'stage', view ? STAGES : [], counts);
  },
});

new Gauge({
  name: 'slipway_maintenance_pods_blocked',
  help: 'Pods the NodeMaintenances report blocked now (sum of status.nodeStatuses[].podsBlocked: PDBs at 0 disruptions allowed, refused evictions).',
  registers: REGISTERS,
  collect() {
    let n = 0;
    for (const m of view?.maintenances() ?? []) for (const s of m.status?.nodeStatuses ?? []) n += s.podsBlocked ?? 0;
    this.set(n);
  },
});

new Gauge({
  name: 'slipway_reconcile_queue_depth',
  help: 'Keys waiting in or being handled by the work queue, per kind.',
  labelNames: ['kind'] as const,
  registers: REGISTERS,
  collect() {
    this.reset();
    for (const [kind, n] of Object.entries(view?.queueDepth() ?? {})) this.set({ kind }, n);
  },
});

export const reconcileErrors = new Counter({
  name: 'slipway_reconcile_errors_total',
  help: 'Reconciles that failed and were queued again with backoff, per kind (not counting "not the leader").',
  labelNames: ['kind'] as const,
  registers: REGISTERS,
});

// controller-runtime's pair (controller_runtime_reconcile_total / _time_seconds), labelled by kind.
export const reconciles = new Counter({
  name: 'slipway_reconcile_total',
  help: 'Reconciles per kind and result: success, error (retried with backoff), requeue (retried quietly, e.g. "not the leader").',
  labelNames: ['kind', 'result'] as const,
  registers: REGISTERS,
});

export const reconcileDuration = new Histogram({
  name: 'slipway_reconcile_duration_seconds',
  help: 'How long one reconcile took, per kind (whatever its result).',
  labelNames: ['kind'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: REGISTERS,
});

const RESULTS = ['success', 'error', 'requeue'] as const;

/** The Controller options that count a kind's reconciles (ControllerOptions.onReconcileError / onReconciled). */
export function reconcileHooks(kind: string) {
  return {
    onReconcileError: () => reconcileErrors.inc({ kind }),
    onReconciled: (seconds: number, result: (typeof RESULTS)[number]) => {
      reconciles.inc({ kind, result });
      reconcileDuration.observe({ kind }, seconds);
    },
  };
}

/** Every kind's series from the term's start, at 0, so a rate() over the first increment is not lost. */
export function reconcileKindsKnown(kinds: string[]): void {
  for (const kind of kinds) {
    reconcileErrors.inc({ kind }, 0);
    for (const result of RESULTS) reconciles.inc({ kind, result }, 0);
  }
}

// ---- what blocks drains, and budgets that admit nobody ---------------------------------------------

/** Why a drain waits, read from its message: a class an alert can name, or undefined when it is not blocked. */
export const DRAIN_BLOCK_REASONS = ['pdb', 'hook', 'lock', 'evacuator', 'rule', 'other'] as const;
export type DrainBlockReason = (typeof DRAIN_BLOCK_REASONS)[number];

export function drainBlockReason(message: string | undefined): DrainBlockReason | undefined {
  if (!message) return undefined;
  if (/waiting for pre-drain hooks/.test(message)) return 'hook';
  if (/^Drain held:/m.test(message)) return 'rule';
  const lines = drainBlockers(message);
  if (lines.some((l) => /disruption budget/i.test(l))) return 'pdb';
  if (lines.some((l) => /dependency lock/i.test(l))) return 'lock';
  if (lines.some((l) => /evacuat/i.test(l))) return 'evacuator';
  return lines.length ? 'other' : undefined;
}

new Gauge({
  name: 'slipway_drain_blocked_nodes',
  help: 'Nodes whose drain is blocked now, by what blocks it (pdb, hook, lock, evacuator, rule: an invalid DrainRule, other), read from the drain messages of CycleNodeRequests and NodeMaintenances.',
  labelNames: ['reason'] as const,
  registers: REGISTERS,
  collect() {
    const counts = new Map<string, number>();
    const count = (message: string | undefined) => {
      const r = drainBlockReason(message);
      if (r) counts.set(r, (counts.get(r) ?? 0) + 1);
    };
    for (const r of view?.requests() ?? []) for (const n of r.status?.nodes ?? []) if (n.phase === 'DrainingPods') count(n.message);
    for (const m of view?.maintenances() ?? []) for (const s of m.status?.nodeStatuses ?? []) count(s.drainMessage);
    setAll(this, 'reason', view ? DRAIN_BLOCK_REASONS : [], counts);
  },
});

new Gauge({
  name: 'slipway_budget_exhausted',
  help: 'Per NodeDisruptionBudget: 1 while it counts as many disrupted nodes as its limit in force allows (status.disruptedNodes >= status.limit.nodes) and holders wait for room.',
  labelNames: ['budget'] as const,
  registers: REGISTERS,
  collect() {
    this.reset();
    for (const b of view?.budgets() ?? []) {
      const s = (b as { status?: NodeDisruptionBudgetStatus }).status;
      if (!s?.limit) continue;
      this.set({ budget: b.metadata?.name ?? '' }, (s.disruptedNodes ?? 0) >= s.limit.nodes && (s.waiting?.length ?? 0) > 0 ? 1 : 0);
    }
  },
});

export const nodesCycled = new Counter({
  name: 'slipway_nodes_cycled_total',
  help: 'Nodes whose cycle this bridge saw end Successful (having seen it running).',
  registers: REGISTERS,
});

export const nodesFailed = new Counter({
  name: 'slipway_nodes_failed_total',
  help: 'Nodes whose cycle this bridge saw end Failed (having seen it running).',
  registers: REGISTERS,
});

export const drainDuration = new Histogram({
  name: 'slipway_drain_duration_seconds',
  help: "A cycled node's drain, from the first status showing DrainingPods to the first showing a later phase (as seen by the status mirror, so within about 250 ms).",
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200],
  registers: REGISTERS,
});

export const mirrorLag = new Histogram({
  name: 'slipway_bridge_status_lag_seconds',
  help: "From a workflow task completing in the history the bridge follows to the bridge holding that workflow's new state (the status query answered), per kind.",
  labelNames: ['kind'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: REGISTERS,
});

/** Node cycles in flight as last seen: `${request uid}/${node}` → phase and when its drain began. */
const inFlight = new Map<string, { phase: string; drainSince?: number }>();

/** A new status of a cycle's workflow: counts the node cycles that ended since the last one, and drains that finished. */
export function cycleStateSeen(uid: string, state: CycleStatus, now = Date.now()): void {
  for (const n of state.nodes) {
    const k = `${uid}/${n.nodeName}`;
    const before = inFlight.get(k);
    const done = n.phase === 'Successful' || n.phase === 'Failed';
    if (before?.drainSince !== undefined && n.phase !== 'DrainingPods') drainDuration.observe((now - before.drainSince) / 1000);
    if (done) {
      if (before && n.phase === 'Successful') nodesCycled.inc();
      if (before && n.phase === 'Failed') nodesFailed.inc();
      inFlight.delete(k);
      continue;
    }
    inFlight.set(k, { phase: n.phase, drainSince: n.phase === 'DrainingPods' ? (before?.drainSince ?? now) : undefined });
  }
  if (state.completedAt || state.phase === 'Successful' || state.phase === 'Failed') {
    for (const k of [...inFlight.keys()]) if (k.startsWith(`${uid}/`)) inFlight.delete(k);
  }
}
