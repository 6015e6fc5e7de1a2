// The chaos runner's faults (bench/chaos/faults.ts): each kill point runs in the scenario that
// passes it, so none is reported "not reached" for want of the right object.
import { allFaults, BASELINES, REDUCED, scenarioOf } from '../../bench/chaos/faults.js';
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
  expect(faults.filter((f) => f.kind === 'point').map((f) => f.name).sort()).toEqual(Object.keys(FAILPOINTS).sort());
  expect(new Set(BASELINES.map((b) => b.scenario))).toEqual(new Set(faults.map((f) => f.scenario)));
  for (const name of REDUCED) expect(faults.map((f) => f.name)).toContain(name);
});
