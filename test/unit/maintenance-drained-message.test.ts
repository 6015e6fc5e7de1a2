// #24.2 on a NodeMaintenance: a node reads Drained only beside what stayed on it and why (its
// nodeStatuses entry), and the Drained condition says on which nodes pods stay.
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { drainMessage, emptyStatus } from '../../workflows/drain/status.js';
import { maintenanceStatus, type Facts } from '../../workflows/maintenance/status.js';
import type { NodeReport } from '../../workflows/maintenance/types.js';

const ZERO = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };
/** A drained node's report as its coordinator makes it: the drain's message past its first line (node.ts). */
const drained = (node: string, skipped: Array<{ pod: string; reason: string }>): NodeReport => ({
  node, seq: 1, lanes: [], finished: true, drained: true, gone: false, released: false, counts: ZERO, coveredBy: [], limitedBy: [],
  blockers: drainMessage({ ...emptyStatus(node), phase: 'Drained', evicted: 2, skipped }).split('\n').slice(1).join('\n'),
});
const facts = (nodes: NodeReport[]): Facts => ({
  name: 'm1', stage: 'Drain', plan: [...DEFAULT_DRAIN_PLAN], index: DEFAULT_DRAIN_PLAN.length, nodes: new Map(nodes.map((r) => [r.node, r])), planned: [],
  selectedTotal: nodes.length, stageStatuses: [], completed: false, deleting: false,
});

describe('#24.2 a drained NodeMaintenance node says what stayed on it', () => {
  test('a pod kept by a Skip DrainRule is named in the node\'s entry and the Drained condition names the node', () => {
    const s = maintenanceStatus(facts([drained('n1', [{ pod: 'app/keep-1', reason: 'DrainRule keep' }]), drained('n2', [])]));
    expect(s.nodeStatuses.find((n) => n.nodeRef.name === 'n1')!.drainMessage).toBe('Drained\n* Pod app/keep-1: skipped (DrainRule keep), left on the node');
    expect(s.nodeStatuses.find((n) => n.nodeRef.name === 'n2')!.drainMessage).toBe('Drained');
    expect(s.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'True', message: 'every selected node is drained; Pods stay on node n1, named in nodeStatuses' });
    expect(s.message).toBe('Drained: 2 nodes; Pods stay on node n1, named in nodeStatuses');
  });

  test('nothing stayed: the condition is as before', () => {
    expect(maintenanceStatus(facts([drained('n1', [])])).conditions.find((c) => c.type === 'Drained')!.message).toBe('every selected node is drained');
    expect(maintenanceStatus(facts([drained('n1', [])])).message).toBe('Drained: 1 node');
  });
});
