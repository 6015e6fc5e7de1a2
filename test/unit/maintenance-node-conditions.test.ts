// NM-6.4, the pure part: which KEP-5683 conditions a held, draining, drained or released node
// carries, and the nodes/status patch that writes only ours, only when they change.
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import { maintenanceConditions, nodeConditionsPatch } from '../../activities/maintenance/node-conditions.js';

const byType = (cs: Array<{ type: string; status: string; reason?: string; message?: string }>) => Object.fromEntries(cs.map((c) => [c.type, [c.status, c.reason, c.message]]));
const node = (conditions: V1NodeCondition[] = []): V1Node => ({ metadata: { name: 'n1', resourceVersion: '7' }, status: { conditions } });
const ready: V1NodeCondition = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' };
const NOW = new Date('2026-11-23T18:00:00.250Z');

describe('NM-6.4 node conditions derived from the hold', () => {
  test('Cordon-stage holders: MaintenanceInProgress True/AdminRequested naming the holders, sorted; no drain', () => {
    expect(byType(maintenanceConditions(['m2', 'm1'], 'Cordoned'))).toEqual({
      MaintenanceInProgress: ['True', 'AdminRequested', 'held by NodeMaintenance m1, m2'],
      DrainInProgress: ['False', 'AdminRequested', 'cordoned for NodeMaintenance m1, m2; no drain requested'],
      Drained: ['False', 'AdminRequested', 'cordoned for NodeMaintenance m1, m2; no drain requested'],
    });
  });

  test('Draining: DrainInProgress True/AdminRequested; Drained False', () => {
    expect(byType(maintenanceConditions(['m1'], 'Draining'))).toEqual({
      MaintenanceInProgress: ['True', 'AdminRequested', 'held by NodeMaintenance m1'],
      DrainInProgress: ['True', 'AdminRequested', 'draining for NodeMaintenance m1'],
      Drained: ['False', 'AdminRequested', 'draining for NodeMaintenance m1'],
    });
  });

  test('Drained: Drained True/DrainCompleted, DrainInProgress False/DrainCompleted, still in maintenance', () => {
    expect(byType(maintenanceConditions(['m1'], 'Drained'))).toEqual({
      MaintenanceInProgress: ['True', 'AdminRequested', 'held by NodeMaintenance m1'],
      DrainInProgress: ['False', 'DrainCompleted', 'drained for NodeMaintenance m1'],
      Drained: ['True', 'DrainCompleted', 'drained for NodeMaintenance m1'],
    });
  });

  test('released: all three False, naming who let go', () => {
    const cs = maintenanceConditions([], undefined, ['m1', 'm2']);
    expect(cs.map((c) => [c.type, c.status])).toEqual([['MaintenanceInProgress', 'False'], ['DrainInProgress', 'False'], ['Drained', 'False']]);
    expect(new Set(cs.map((c) => c.message))).toEqual(new Set(['no NodeMaintenance holds the node (released by m1, m2)']));
  });
});

describe('NM-6.4 the nodes/status patch', () => {
  test('carries only our condition types (merged by type: Ready is not in it), with the resourceVersion read and whole-second times', () => {
    const p = nodeConditionsPatch(node([ready]), maintenanceConditions(['m1'], 'Draining'), NOW)!;
    expect(p.metadata).toEqual({ resourceVersion: '7' });
    expect(p.status.conditions.map((c) => c.type)).toEqual(['MaintenanceInProgress', 'DrainInProgress', 'Drained']);
    for (const c of p.status.conditions) expect([c.lastTransitionTime, c.lastHeartbeatTime]).toEqual(['2026-11-23T18:00:00Z', '2026-11-23T18:00:00Z']);
  });

  test('nothing when the node already shows them; only the changed ones otherwise, keeping the transition time of an unchanged status', () => {
    const at = new Date('2026-11-23T17:00:00Z');
    const onNode = maintenanceConditions(['m1'], 'Draining').map((c) => ({ ...c, lastTransitionTime: at, lastHeartbeatTime: at }));
    expect(nodeConditionsPatch(node([ready, ...onNode]), maintenanceConditions(['m1'], 'Draining'), NOW)).toBeUndefined();
    const p = nodeConditionsPatch(node([ready, ...onNode]), maintenanceConditions(['m1', 'm2'], 'Draining'), NOW)!;
    // Every message names the holders, so all three change; none changes status, so transitions stay.
    expect(p.status.conditions.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ['MaintenanceInProgress', '2026-11-23T17:00:00Z'],
      ['DrainInProgress', '2026-11-23T17:00:00Z'],
      ['Drained', '2026-11-23T17:00:00Z'],
    ]);
    const drained = nodeConditionsPatch(node([ready, ...onNode]), maintenanceConditions(['m1'], 'Drained'), NOW)!;
    expect(drained.status.conditions.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ['DrainInProgress', 'False', '2026-11-23T18:00:00Z'],
      ['Drained', 'True', '2026-11-23T18:00:00Z'],
    ]);
  });

  test('a release turns them False, and writes nothing to a node that never carried them or shows them False already', () => {
    const onNode = maintenanceConditions(['m1'], 'Drained').map((c) => ({ ...c }));
    const p = nodeConditionsPatch(node([ready, ...onNode]), maintenanceConditions([], undefined, ['m1']), NOW)!;
    expect(p.status.conditions.map((c) => [c.type, c.status])).toEqual([['MaintenanceInProgress', 'False'], ['DrainInProgress', 'False'], ['Drained', 'False']]);
    expect(nodeConditionsPatch(node([ready]), maintenanceConditions([], undefined, []), NOW)).toBeUndefined();
    const off = maintenanceConditions([], undefined, ['m1']);
    expect(nodeConditionsPatch(node([ready, ...off]), maintenanceConditions([], undefined, []), NOW)).toBeUndefined();
  });
});
