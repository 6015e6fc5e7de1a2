// Which edits a running cycle takes: only cycleSettings.concurrency.
import { CycleNodeRequestSpec, type CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { immutableChanges } from '../../workflows/cycle/spec-change.js';

const base: CycleNodeRequestSpecInput = CycleNodeRequestSpec.parse({
  nodeGroupName: 'workers',
  selector: { matchLabels: { pool: 'a' } },
  cycleSettings: { concurrency: 2, labelsToRemove: ['x', 'y'] },
  healthChecks: [{ endpoint: 'http://{{ .NodeIP }}/healthz', waitPeriod: '1m' }],
});

test('a concurrency change, added or removed, is no immutable change', () => {
  expect(immutableChanges(base, { ...base, cycleSettings: { ...base.cycleSettings, concurrency: 7 } })).toEqual([]);
  const { concurrency: _c, ...without } = base.cycleSettings!;
  expect(immutableChanges(base, { ...base, cycleSettings: without })).toEqual([]);
});

test('key order does not matter, values do', () => {
  const reordered = Object.fromEntries(Object.entries(base).reverse()) as CycleNodeRequestSpecInput;
  expect(Object.keys(reordered)).not.toEqual(Object.keys(base));
  expect(immutableChanges(base, reordered)).toEqual([]);
  expect(immutableChanges(base, { ...base, cycleSettings: { ...base.cycleSettings, labelsToRemove: ['y', 'x'] } })).toEqual(['cycleSettings.labelsToRemove']);
});

test('every other field is named when it changes, appears or disappears', () => {
  expect(immutableChanges(base, { ...base, selector: { matchLabels: { pool: 'b' } } })).toEqual(['selector.matchLabels.pool']);
  expect(immutableChanges(base, { ...base, cycleSettings: { ...base.cycleSettings, method: 'Wait' } })).toEqual(['cycleSettings.method']);
  expect(immutableChanges(base, { ...base, nodeNames: ['n1'] })).toEqual(['nodeNames']);
  const { healthChecks: _h, ...noChecks } = base;
  expect(immutableChanges(base, noChecks)).toEqual(['healthChecks']);
  expect(immutableChanges(base, { ...base, nodeGroupName: 'other', skipInitialHealthChecks: true })).toEqual(['nodeGroupName', 'skipInitialHealthChecks']);
});
