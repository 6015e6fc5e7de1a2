// #28: a CycleNodeRequest's status does not grow with its node count. status.nodes[] lists the
// nodes in flight, the first failed, the last finished (and pending ones while the list is short),
// with counts per phase; a status past its budget is cut and says so; every node keeps its
// CycleNodeStatus (PodLeftOnNode is not repeated for nodes the list no longer names).
import { CycleNodeRequestStatus, type CycleNodeSummary } from '../../api/cycle-node-request.js';
import { requestStatus, podLeftEvents } from '../../starter/bridge/cycle/status.js';

/** The design's numbers (starter/bridge/cycle/listed.ts), literal so the test also runs against code without them. */
const LISTED_FINISHED = 50;
const STATUS_BUDGET_BYTES = 256 * 1024;import type { CycleNodeStatus, CycleStatus } from '../../workflows/cycle/types.js';

const now = new Date('2026-01-01T10:00:00Z');
const wf = { workflowId: 'cnr/ns/big/uid-1', runId: 'run-1' };
const ec2 = (i: number) => `ip-10-0-${Math.floor(i / 250)}-${String(i % 250).padStart(5, '0')}.eu-west-1.compute.internal`;
const node = (i: number, phase: CycleNodeStatus['phase'], extra: Partial<CycleNodeStatus> = {}): CycleNodeStatus => ({
  nodeName: ec2(i),
  phase,
  providerID: `aws:///eu-west-1a/i-0${String(i).padStart(16, '0')}`,
  nodeGroup: 'workers',
  ...extra,
});

/** A 20,000-node request: 8,000 cycled, 3 failed, 500 draining, the rest pending. */
function fleet(): CycleStatus {
  const nodes: CycleNodeStatus[] = [];
  for (let i = 0; i < 20_000; i++) {
    const phase = i < 8_000 ? 'Successful' : i < 8_003 ? 'Failed' : i < 8_503 ? 'DrainingPods' : 'Pending';
    nodes.push(node(i, phase, phase === 'DrainingPods' ? { drainMessage: `Drain not completed yet:\n* Pod ns/web-${i}: cannot evict (PodDisruptionBudget ns/web)` } : {}));
  }
  return { phase: 'WaitingTermination', message: '500 nodes draining', nodes, nodesCycled: 8_000, nodesTotal: 20_000 };
}

const bytes = (o: unknown) => Buffer.byteLength(JSON.stringify(o));
const names = (l: readonly CycleNodeSummary[] | undefined, phase: string) => (l ?? []).filter((n) => n.phase === phase).map((n) => n.name);

describe('#28 status.nodes[] of a CycleNodeRequest is bounded', () => {
  test('#28 a 20,000-node request: in flight, failed and the last finished listed, counts per phase for all, under 256 KiB and valid against the CRD schema', () => {
    const s = requestStatus({ prev: undefined, workflow: wf, state: fleet(), observedGeneration: 1, now, requestLabel: 'slipway.dev/cycle-node-request=big' });
    expect(names(s.nodes, 'DrainingPods')).toHaveLength(500);
    expect(names(s.nodes, 'Failed')).toEqual([ec2(8_000), ec2(8_001), ec2(8_002)]);
    expect(names(s.nodes, 'Successful')).toHaveLength(LISTED_FINISHED);
    expect(names(s.nodes, 'Pending')).toEqual([]);
    expect(s.nodesByPhase).toEqual({ Pending: 11_497, WaitingPods: 0, RemovingLabelsFromPods: 0, DrainingPods: 500, DeletingNode: 0, TerminatingNode: 0, Successful: 8_000, Failed: 3 });
    expect(s.nodesNotListed).toBe(20_000 - s.nodes!.length);
    expect(bytes(s)).toBeLessThanOrEqual(STATUS_BUDGET_BYTES);
    expect(CycleNodeRequestStatus.safeParse(s).success).toBe(true);
  });

  test('#28 the last finished are kept in the order they finished, across updates; the first failed stay', () => {
    const st = fleet();
    const first = requestStatus({ prev: undefined, workflow: wf, state: st, observedGeneration: 1, now });
    // Ten draining nodes finish, two fail.
    for (let i = 8_003; i < 8_013; i++) st.nodes[i]!.phase = 'Successful';
    for (let i = 8_013; i < 8_015; i++) st.nodes[i]!.phase = 'Failed';
    const next = requestStatus({ prev: first, workflow: wf, state: st, observedGeneration: 1, now });
    const done = names(next.nodes, 'Successful');
    expect(done).toHaveLength(LISTED_FINISHED);
    expect(done.slice(-10)).toEqual(Array.from({ length: 10 }, (_, k) => ec2(8_003 + k)));
    expect(names(next.nodes, 'Failed')).toEqual([8_000, 8_001, 8_002, 8_013, 8_014].map(ec2));
    // The workflow may name only its own bounded list: finished nodes the bridge listed stay.
    const bounded = { ...st, nodes: st.nodes.filter((n) => n.phase !== 'Successful' && n.phase !== 'Pending') };
    const again = requestStatus({ prev: next, workflow: wf, state: bounded, observedGeneration: 1, now });
    expect(names(again.nodes, 'Successful')).toEqual(done);
  });

  test('#28 a status over its budget (long drain messages) is cut with a message saying so, never an oversized write', () => {
    const st = fleet();
    for (const n of st.nodes) if (n.phase === 'DrainingPods') n.drainMessage = `Drain not completed yet:\n${'* Pod ns/x: cannot evict (a long reason) '.repeat(30)}`;
    const s = requestStatus({ prev: undefined, workflow: wf, state: st, observedGeneration: 1, now, requestLabel: 'slipway.dev/cycle-node-request=big' });
    expect(bytes(s)).toBeLessThanOrEqual(STATUS_BUDGET_BYTES);
    expect(s.message).toMatch(/^500 nodes draining \(status\.nodes\[\] cut to fit 256 KiB: \d+ entries left out; every node: kubectl get cns -l slipway\.dev\/cycle-node-request=big\)$/);
    // The finished go first; the failed stay.
    expect(names(s.nodes, 'Successful')).toEqual([]);
    expect(names(s.nodes, 'Failed')).toHaveLength(3);
    expect(s.nodesNotListed).toBe(20_000 - s.nodes!.length);
  });

  test('#28 a small request still lists every node, pending ones included', () => {
    const st: CycleStatus = { phase: 'ScalingUp', message: '', nodes: [node(0, 'Successful'), node(1, 'DrainingPods'), node(2, 'Pending'), node(3, 'Pending')], nodesCycled: 1, nodesTotal: 4 };
    const s = requestStatus({ prev: undefined, workflow: wf, state: st, observedGeneration: 1, now });
    expect(s.nodes!.map((n) => n.name)).toEqual([0, 1, 2, 3].map(ec2));
    expect(s.nodesNotListed).toBe(0);
  });

  test('#28 PodLeftOnNode is not repeated for a node cycled before the list stopped naming it (its CycleNodeStatus remembers)', () => {
    const returning = [{ pod: 'ns/sticky', reason: 'returns after eviction' }];
    const nodes = [node(1, 'Successful', { returning })];
    expect(podLeftEvents(undefined, nodes, wf.workflowId)).toHaveLength(1);
    expect(podLeftEvents(undefined, nodes, wf.workflowId, (n) => n === ec2(1))).toEqual([]);
  });
});

describe('#28 the bridge metric counts every node', () => {
  test('#28 slipway_cycle_nodes counts by status.nodesByPhase, not by the bounded status.nodes[]', async () => {
    const { setBridgeView } = await import('../../starter/bridge/metrics.js');
    const { bridgeRegistry } = await import('../../shared/metrics.js');
    const status = requestStatus({ prev: undefined, workflow: wf, state: fleet(), observedGeneration: 1, now });
    const obj = { apiVersion: 'slipway.dev/v1alpha1', kind: 'CycleNodeRequest', metadata: { namespace: 'ns', name: 'big', uid: 'uid-1' }, spec: {}, status };
    const v = { requests: () => [obj], maintenances: () => [], budgets: () => [], queueDepth: () => ({}), synced: () => true };
    setBridgeView(v as never);
    try {
      const text = await bridgeRegistry.getSingleMetricAsString('slipway_cycle_nodes');
      expect(text).toContain('slipway_cycle_nodes{phase="Successful"} 8000');
      expect(text).toContain('slipway_cycle_nodes{phase="Pending"} 11497');
    } finally {
      setBridgeView(undefined);
    }
  });
});
