// The worker's own metrics, counted where the drain acts (every eviction attempt goes through
// evictPresent; forced actions and skips are the drain's Events). Registered in workerRegistry
// (shared/metrics.ts), served by worker/main.ts at /metrics.
import { Counter, Gauge } from 'prom-client';
import { workerRegistry } from '../shared/metrics.js';

export const podsEvicted = new Counter({
  name: 'slipway_drain_pods_evicted_total',
  help: 'Evictions the apiserver accepted (each pod once per eviction sent; a retry after a refusal counts only when accepted).',
  registers: [workerRegistry],
});

export const evictionsRefused = new Counter({
  name: 'slipway_drain_evictions_refused_total',
  help: 'Eviction attempts refused, by reason: pdb (a PodDisruptionBudget), other (conflict, multiple PDBs, terminating namespace, error).',
  labelNames: ['reason'] as const,
  registers: [workerRegistry],
});

export const podsSkipped = new Counter({
  name: 'slipway_drain_pods_skipped_total',
  help: 'Pods a drain skipped on request (skipPod signal; DrainSkippedPod Event), once per pod and drain.',
  registers: [workerRegistry],
});

export const podsForceDeleted = new Counter({
  name: 'slipway_drain_pods_force_deleted_total',
  help: 'Pods a drain deleted instead of evicting, by trigger: operator (forceDeletePod signal) or timeout (podEvictionTimeout policy Delete).',
  labelNames: ['trigger'] as const,
  registers: [workerRegistry],
});

// Every known label value from the start, so a rate() over the first increment is not lost.
for (const reason of ['pdb', 'other']) evictionsRefused.inc({ reason }, 0);
for (const trigger of ['operator', 'timeout']) podsForceDeleted.inc({ trigger }, 0);

/** How long a PDB refusal stays "current" without a newer answer: the wave wait retries at least every 10 s. */
const BLOCKED_FRESH_MS = 30_000;
const blockedByPdb = new Map<string, number>(); // pod uid → time of its latest refusal by a PDB

new Gauge({
  name: 'slipway_drain_pods_blocked_by_pdb',
  help: 'Pods whose latest eviction answer (within the last 30 s) was a PodDisruptionBudget refusal.',
  registers: [workerRegistry],
  collect() {
    const now = Date.now();
    for (const [uid, at] of blockedByPdb) if (now - at > BLOCKED_FRESH_MS) blockedByPdb.delete(uid);
    this.set(blockedByPdb.size);
  },
});

/** The eviction of pod `uid` was answered: counts it and keeps the PDB-blocked set current. */
export function evictionAnswered(uid: string, outcome: string, reason: string | undefined): void {
  if (outcome === 'NotTried') return;
  const byPdb = outcome === 'Blocked' && /disruption budget/i.test(reason ?? '');
  if (byPdb) blockedByPdb.set(uid, Date.now());
  else blockedByPdb.delete(uid);
  if (outcome === 'Evicted') podsEvicted.inc();
  else if (byPdb) evictionsRefused.inc({ reason: 'pdb' });
  else if (outcome === 'Blocked' || outcome === 'MultiplePDBs' || outcome === 'NamespaceTerminating' || outcome === 'Failed') evictionsRefused.inc({ reason: 'other' });
}

/** The Event reasons of the drain's forced actions (workflows/drain/pass.ts recordForced), counted once each (the Event is deduplicated). */
export function forcedActionRecorded(eventReason: string): void {
  if (eventReason === 'DrainSkippedPod') podsSkipped.inc();
  else if (eventReason === 'DrainForceDeletedPod') podsForceDeleted.inc({ trigger: 'operator' });
  else if (eventReason === 'DrainDeletedPodAfterTimeout') podsForceDeleted.inc({ trigger: 'timeout' });
}

/** Distinct nodes each NodeDisruptionBudget's ledger holds as disrupted, as of this worker's last write to it. */
export const budgetDisruptedNodes = new Gauge({
  name: 'slipway_budget_disrupted_nodes',
  help: 'Nodes a NodeDisruptionBudget counts as disrupted (status.disruptedNodes), as of the last ledger write by this worker.',
  labelNames: ['budget'] as const,
  registers: [workerRegistry],
});
