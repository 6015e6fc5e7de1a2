// The chaos runner's faults: one kill point per failpoint (shared/failpoint.ts), the server faults,
// and the random-time kills. Which process owns a point, and which scenario reaches it.
import { FAILPOINTS, type FailpointName } from '../../shared/failpoint.js';

/**
 * cycle: a CycleNodeRequest of a 2-instance group (run.ts); delete: the same, deleted once its first
 * node is detached; maintenance: a NodeMaintenance over 2 kwok nodes created at stage Drain, then
 * Complete (nodes.ts); maintenance-delete: the same, deleted once Drained; cli-drain: the CLI's
 * `drain <node>` of one kwok node; rollout: a rolling NodeMaintenance over 3 kwok nodes in two
 * partitions, each node marked done once it awaits its work (rollout.ts).
 */
export type Scenario = 'cycle' | 'delete' | 'maintenance' | 'maintenance-delete' | 'cli-drain' | 'rollout';
export type ServerFault = 'temporal.restart' | 'apiserver.stop-60s' | 'moto.pause-30s';

export type Fault =
  /** `arm`: what the failpoints file is given (default the name): a point, or `point@N` for its Nth pass. */
  | { kind: 'point'; name: string; arm?: string; process: 'worker' | 'bridge'; scenario: Scenario; description: string }
  | { kind: 'server'; name: ServerFault; scenario: Scenario; description: string }
  | { kind: 'random'; name: string; process: 'worker' | 'bridge'; atMs: number; scenario: Scenario; description: string }
  | { kind: 'none'; name: string; scenario: Scenario; description: string };

/** The same cycle undisturbed: what each fault's time to end compares with. */
export const BASELINE: Fault = { kind: 'none', name: 'baseline', scenario: 'cycle', description: 'no fault: the undisturbed cycle' };
/** Each scenario undisturbed (`--only baseline.maintenance`). */
export const BASELINES: Fault[] = [
  BASELINE,
  { kind: 'none', name: 'baseline.delete', scenario: 'delete', description: 'no fault: the undisturbed cycle, deleted once its first node is detached (healing)' },
  { kind: 'none', name: 'baseline.maintenance', scenario: 'maintenance', description: 'no fault: the undisturbed maintenance (Drain, then Complete)' },
  { kind: 'none', name: 'baseline.maintenance-delete', scenario: 'maintenance-delete', description: 'no fault: the undisturbed maintenance, deleted once Drained' },
  { kind: 'none', name: 'baseline.cli-drain', scenario: 'cli-drain', description: 'no fault: the undisturbed CLI drain' },
  { kind: 'none', name: 'baseline.rollout', scenario: 'rollout', description: 'no fault: the undisturbed rolling maintenance (every node done, then Complete)' },
];

/**
 * The rollout's kill points at the coordinator's writes it shares with every maintenance, at the
 * pass the rollout scenario (rollout.ts: zone-a <group>-0, -1; zone-b <group>-2; maxUnavailable 1)
 * reaches them: the first node's cordon; the first release (uncordon) before the next node starts;
 * the second release, the last of zone-a, before zone-b's node starts (the partition switch).
 * The rollout's own points (worker.rollout.*) are in allFaults().
 */
export const ROLLOUT_FAULTS: Fault[] = [
  { kind: 'point', name: 'rollout.after-cordon', arm: 'worker.maintenance.after-cordon@1', process: 'worker', scenario: 'rollout', description: 'a rolling maintenance\'s first node cordoned, before its report' },
  { kind: 'point', name: 'rollout.after-uncordon', arm: 'worker.maintenance.after-uncordon@1', process: 'worker', scenario: 'rollout', description: 'the first node released (uncordoned) after its work, before the next node starts' },
  { kind: 'point', name: 'rollout.partition-switch', arm: 'worker.maintenance.after-uncordon@2', process: 'worker', scenario: 'rollout', description: 'the last node of the first partition released, before the next partition\'s node starts' },
];

/** Points only a deleted request passes (healing, the bridge's deletion path). */
const DELETE_POINTS: FailpointName[] = ['worker.cycle.mid-heal', 'worker.cycle.after-heal', 'bridge.cnr.after-cancel', 'bridge.cnr.before-finalizer-removal'];
/** Points only a deleted NodeMaintenance passes (the bridge's deletion path). */
const MAINTENANCE_DELETE_POINTS: FailpointName[] = ['bridge.nm.after-stage-complete', 'bridge.nm.before-finalizer-removal'];

/** The scenario that reaches a point. */
export function scenarioOf(name: FailpointName): Scenario {
  if (DELETE_POINTS.includes(name)) return 'delete';
  if (MAINTENANCE_DELETE_POINTS.includes(name)) return 'maintenance-delete';
  if (name.startsWith('worker.maintenance.') || name.startsWith('bridge.nm.')) return 'maintenance';
  if (name.startsWith('worker.cli-drain.')) return 'cli-drain';
  if (name.startsWith('worker.rollout.')) return 'rollout';
  return 'cycle';
}

export const SERVER_FAULTS: Record<ServerFault, string> = {
  'temporal.restart': 'Temporal dev server restarted at the first eviction (SQLite keeps its state)',
  'apiserver.stop-60s': 'kube-apiserver stopped for 60 s at the first eviction, then started again',
  'moto.pause-30s': 'moto paused (SIGSTOP) for 30 s once the batch is detached, mid scale-up (a restart would lose its in-memory cloud)',
};

export function allFaults(): Fault[] {
  const points = (Object.keys(FAILPOINTS) as FailpointName[]).map((name): Fault => ({
    kind: 'point',
    name,
    process: name.startsWith('bridge.') ? 'bridge' : 'worker',
    scenario: scenarioOf(name),
    description: FAILPOINTS[name],
  }));
  const servers = (Object.keys(SERVER_FAULTS) as ServerFault[]).map((name): Fault => ({ kind: 'server', name, scenario: 'cycle', description: SERVER_FAULTS[name] }));
  return [...points, ...ROLLOUT_FAULTS, ...servers];
}

/** `n` kills at a random moment (1–12 s after the request is created: the undisturbed cycle takes ~14 s), alternating worker and bridge. */
export function randomFaults(n: number, random = Math.random): Fault[] {
  return Array.from({ length: n }, (_, i): Fault => {
    const process = i % 2 === 0 ? 'worker' : 'bridge';
    const atMs = Math.round(1000 + random() * 11_000);
    return { kind: 'random', name: `random.${process}@${(atMs / 1000).toFixed(1)}s`, process, atMs, scenario: 'cycle', description: `SIGKILL of the ${process} ${(atMs / 1000).toFixed(1)} s after the request is created` };
  });
}

/** The reduced set run by `npm test` (test/integration/chaos.test.ts): worker, bridge, a server restart; a NodeMaintenance's drain and deletion. */
export const REDUCED = [
  'worker.drain.mid-wave',
  'worker.cycle.after-node-delete',
  'worker.cycle.mid-heal',
  'bridge.cnr.after-start',
  'bridge.cnr.after-cancel',
  'temporal.restart',
  'worker.maintenance.mid-drain',
  'bridge.nm.before-finalizer-removal',
  'worker.budget.after-acquire-write',
  'worker.budget.after-release-write',
];
