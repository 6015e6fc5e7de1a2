// NM-7.5–7.7, the pure parts: a cycle and a maintenance never act on the same node, the first
// claim wins. The maintenance's hold patch refuses a node a cycle claimed; the cycle's claim
// decision refuses a node a maintenance holds; each write carries the resourceVersion it read.
import type { V1Node } from '@kubernetes/client-node';
import { claimDecision } from '../../activities/cycle/claim.js';
import { claimantName } from '../../activities/cycle/markers.js';
import { nodeStatePatch } from '../../activities/maintenance/node-state.js';
import { nodeFacts } from '../../activities/drain/snapshot.js';
import { drainMessage, emptyStatus } from '../../workflows/drain/status.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL, WAS_UNSCHEDULABLE_ANNOTATION } from '../../api/node-maintenance.js';
import { maintenanceStatus, progressNodes, type Facts } from '../../workflows/maintenance/status.js';
import { advance } from '../../workflows/maintenance/progress.js';
import type { NodeReport } from '../../workflows/maintenance/types.js';
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';

const node = (annotations: Record<string, string> = {}, labels: Record<string, string> = {}, unschedulable = false): V1Node => ({
  metadata: { name: 'n1', resourceVersion: '42', annotations, labels },
  spec: unschedulable ? { unschedulable: true } : {},
});

describe('NM-7.5 the maintenance side: writeMaintenanceNodeState refuses a node a cycle claimed', () => {
  test('a hold on a claimed node writes nothing and names the request', () => {
    const r = nodeStatePatch(node({ [CYCLED_BY]: 'ops/cycle-a/uid-1' }), { node: 'n1', holders: ['m1'], state: 'Cordoned' });
    expect(r.patch).toBeUndefined();
    expect(r.claimedBy).toBe('ops/cycle-a');
    expect(r.reverted).toBe(false);
  });

  test('a hold on an unclaimed node cordons it, with the resourceVersion it was computed from', () => {
    const r = nodeStatePatch(node(), { node: 'n1', holders: ['m1'], state: 'Cordoned' });
    expect(r.claimedBy).toBeUndefined();
    expect(r.patch).toEqual({
      metadata: { resourceVersion: '42', labels: { [MAINTENANCE_STATE_LABEL]: 'Cordoned' }, annotations: { [HELD_BY_ANNOTATION]: 'm1' } },
      spec: { unschedulable: true },
    });
  });

  test('a release of a claimed node the maintenance never held writes nothing (the cycle keeps its cordon)', () => {
    const r = nodeStatePatch(node({ [CYCLED_BY]: 'ops/cycle-a/uid-1' }, {}, true), { node: 'n1', holders: [] });
    expect(r.patch).toBeUndefined();
    expect(r.claimedBy).toBeUndefined();
  });

  test('once the cycle lets go (claim removed), the hold goes through as for a node that just matched', () => {
    const r = nodeStatePatch(node({}, {}, false), { node: 'n1', holders: ['m1'], state: 'Draining' });
    expect(r.patch?.metadata.annotations[HELD_BY_ANNOTATION]).toBe('m1');
    expect(r.patch?.metadata.annotations[WAS_UNSCHEDULABLE_ANNOTATION]).toBeUndefined();
    expect(r.patch?.spec).toEqual({ unschedulable: true });
  });
});

describe('NM-7.5 the cycle side: claimDecision', () => {
  test('refuses a node a maintenance holds, naming the first holder and its stage from the state label', () => {
    expect(claimDecision(node({ [HELD_BY_ANNOTATION]: 'a-kernel,b-firmware' }, { [MAINTENANCE_STATE_LABEL]: 'Draining' }), 'ops/c/u')).toEqual({ kind: 'held', maintenance: 'a-kernel', stage: 'Drain' });
    expect(claimDecision(node({ [HELD_BY_ANNOTATION]: 'a-kernel' }, { [MAINTENANCE_STATE_LABEL]: 'Cordoned' }), 'ops/c/u')).toEqual({ kind: 'held', maintenance: 'a-kernel', stage: 'Cordon' });
  });

  test('an empty held-by is no hold: the claim is written with a resourceVersion precondition', () => {
    expect(claimDecision(node({ [HELD_BY_ANNOTATION]: '' }), 'ops/c/u')).toEqual({
      kind: 'write',
      patch: { metadata: { resourceVersion: '42', annotations: { [CYCLED_BY]: 'ops/c/u' } } },
    });
  });

  test('its own claim is kept as it is (a retry writes nothing)', () => {
    expect(claimDecision(node({ [CYCLED_BY]: 'ops/c/u' }), 'ops/c/u')).toEqual({ kind: 'ours' });
  });

  test("another request's leftover claim is taken over (the node-group lock lets one request cycle a group)", () => {
    expect(claimDecision(node({ [CYCLED_BY]: 'ops/old/u0' }), 'ops/c/u')).toMatchObject({ kind: 'write' });
  });

  test('claimantName reads ns/name from a request key or a cycle workflow ID', () => {
    expect(claimantName('ops/cycle-a/uid-1')).toBe('ops/cycle-a');
    expect(claimantName('cnr/ops/cycle-a/uid-1')).toBe('ops/cycle-a');
  });
});

describe('NM-7.7 the maintenance reports a claimed node', () => {
  const report = (over: Partial<NodeReport> = {}): NodeReport => ({
    node: 'n1', seq: 1, lanes: [], finished: false, drained: false, gone: false, released: false,
    counts: { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 }, coveredBy: [], limitedBy: [], blockers: '', ...over,
  });
  const facts = (stage: Facts['stage'], nodes: Array<[string, NodeReport]>): Facts => ({
    name: 'm1', stage, plan: [...DEFAULT_DRAIN_PLAN], index: 0, nodes: new Map(nodes), planned: [], selectedTotal: nodes.length, stageStatuses: [], completed: false, deleting: false,
  });

  test.each(['Cordon', 'Drain'] as const)('in %s its message is "Cycled by CycleNodeRequest ns/name"', (stage) => {
    const s = maintenanceStatus(facts(stage, [['n1', report({ claimedBy: 'ops/cycle-a' })]]));
    expect(s.nodeStatuses[0]!.drainMessage).toBe('Cycled by CycleNodeRequest ops/cycle-a');
  });

  test('a claimed node takes no part in advancing, and is not drained', () => {
    const f = facts('Drain', [['n1', report({ claimedBy: 'ops/cycle-a' })]]);
    expect(progressNodes(f)[0]!.claimed).toBe(true);
    expect(advance(DEFAULT_DRAIN_PLAN, 0, progressNodes(f))).toBe(DEFAULT_DRAIN_PLAN.length);
    expect(maintenanceStatus(f).conditions.find((c) => c.type === 'Drained')!.status).toBe('False');
  });

  test('a node the cycle deleted counts as finished: "Node no longer exists"', () => {
    const s = maintenanceStatus(facts('Drain', [['n1', report({ gone: true, finished: true, drained: true })]]));
    expect(s.nodeStatuses[0]!.drainMessage).toBe('Node no longer exists');
  });
});

test('#26.5 a maintenance\'s drain reads the claim with the node, and its message names the request while the claim holds it (NM-7.7)', () => {
  expect(nodeFacts('n1', node({ [CYCLED_BY]: 'ops/cycle-a/uid-1' })).claimedBy).toBe('ops/cycle-a');
  expect('claimedBy' in nodeFacts('n1', node())).toBe(false); // none: no field (the recorded histories keep their shape)
  const s = { ...emptyStatus('n1'), phase: 'Draining' as const, claimedBy: 'ops/cycle-a' };
  expect(drainMessage(s)).toBe('Cycled by CycleNodeRequest ops/cycle-a: nothing is evicted until it lets go of Node n1');
});
