// The chaos runner's faults: one kill point per failpoint (shared/failpoint.ts), the server faults,
// and the random-time kills. Which process owns a point, and which scenario reaches it.
import { FAILPOINTS, type FailpointName } from '../../shared/failpoint.js';

export type Scenario = 'cycle' | 'delete';
export type ServerFault = 'temporal.restart' | 'apiserver.stop-60s' | 'moto.pause-30s';

export type Fault =
  | { kind: 'point'; name: FailpointName; process: 'worker' | 'bridge'; scenario: Scenario; description: string }
  | { kind: 'server'; name: ServerFault; scenario: Scenario; description: string }
  | { kind: 'random'; name: string; process: 'worker' | 'bridge'; atMs: number; scenario: Scenario; description: string }
  | { kind: 'none'; name: 'baseline'; scenario: Scenario; description: string };

/** The same cycle undisturbed: what each fault's time to end compares with. */
export const BASELINE: Fault = { kind: 'none', name: 'baseline', scenario: 'cycle', description: 'no fault: the undisturbed cycle' };

/** Points only a deleted request passes (healing, the bridge's deletion path). */
const DELETE_POINTS: FailpointName[] = ['worker.cycle.mid-heal', 'worker.cycle.after-heal', 'bridge.cnr.after-cancel', 'bridge.cnr.before-finalizer-removal'];

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
    scenario: DELETE_POINTS.includes(name) ? 'delete' : 'cycle',
    description: FAILPOINTS[name],
  }));
  const servers = (Object.keys(SERVER_FAULTS) as ServerFault[]).map((name): Fault => ({ kind: 'server', name, scenario: 'cycle', description: SERVER_FAULTS[name] }));
  return [...points, ...servers];
}

/** `n` kills at a random moment (1–12 s after the request is created: the undisturbed cycle takes ~14 s), alternating worker and bridge. */
export function randomFaults(n: number, random = Math.random): Fault[] {
  return Array.from({ length: n }, (_, i): Fault => {
    const process = i % 2 === 0 ? 'worker' : 'bridge';
    const atMs = Math.round(1000 + random() * 11_000);
    return { kind: 'random', name: `random.${process}@${(atMs / 1000).toFixed(1)}s`, process, atMs, scenario: 'cycle', description: `SIGKILL of the ${process} ${(atMs / 1000).toFixed(1)} s after the request is created` };
  });
}

/** The reduced set run by `npm test` (test/integration/chaos.test.ts): worker, bridge, a server restart. */
export const REDUCED = ['worker.drain.mid-wave', 'worker.cycle.after-node-delete', 'worker.cycle.mid-heal', 'bridge.cnr.after-start', 'bridge.cnr.after-cancel', 'temporal.restart'];
