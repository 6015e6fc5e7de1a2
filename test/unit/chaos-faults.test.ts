// The chaos runner's faults (bench/chaos/faults.ts): each kill point runs in the scenario that
// passes it, so none is reported "not reached" for want of the right object.
import { allFaults, BASELINES, REDUCED, ROLLOUT_FAULTS, scenarioOf } from '../../bench/chaos/faults.js';
import { FAILPOINTS, type FailpointName } from '../../shared/failpoint.js';

test('a NodeMaintenance\'s points run a maintenance, its deletion path a deleted one, the CLI\'s a CLI drain, a request\'s deletion path a deleted request', () => {
  const by = (name: FailpointName) => scenarioOf(name);
  expect(by('worker.maintenance.after-cordon')).toBe('maintenance');
  expect(by('worker.maintenance.mid-drain')).toBe('maintenance');
  expect(by('bridge.nm.after-start')).toBe('maintenance');
  expect(by('bridge.nm.after-stage-complete')).toBe('maintenance-delete');
  expect(by('bridge.nm.before-finalizer-removal')).toBe('maintenance-delete');
  expect(by('worker.cli-drain.mid-wave')).toBe('cli-drain');
  expect(by('worker.cycle.mid-heal')).toBe('delete');
  expect(by('bridge.cnr.after-cancel')).toBe('delete');
  expect(by('worker.drain.mid-wave')).toBe('cycle');
});

test('every point is a fault, every scenario has its baseline, and the reduced set names only faults', () => {
  const faults = allFaults();
  // Every point once under its own name, and the rollout's passes of the shared ones (ROLLOUT_FAULTS).
  const points = faults.filter((f) => f.kind === 'point' && !ROLLOUT_FAULTS.includes(f));
  expect(points.map((f) => f.name).sort()).toEqual(Object.keys(FAILPOINTS).sort());
  expect(new Set(BASELINES.map((b) => b.scenario))).toEqual(new Set(faults.map((f) => f.scenario)));
  for (const name of REDUCED) expect(faults.map((f) => f.name)).toContain(name);
});

test('RM-7.2 the rollout\'s kill points: its own points and the passes of a coordinator\'s writes it reaches, each armed with a point that exists, all in the rollout scenario', () => {
  const rollout = allFaults().filter((f) => f.scenario === 'rollout').map((f) => f.name).sort();
  expect(rollout).toEqual(['rollout.after-cordon', 'rollout.after-uncordon', 'rollout.partition-switch', 'worker.rollout.after-boot-read', 'worker.rollout.awaiting-work']);
  for (const f of ROLLOUT_FAULTS) {
    expect(f.kind === 'point' && f.arm && Object.keys(FAILPOINTS).includes(f.arm.split('@')[0]!)).toBe(true);
  }
});
