// The CycleNodeRequest reconciler's decisions as one pure function: finalizers, status, Events and
// CycleNodeStatus writes, computed from the cached objects and the workflow's state, no cluster.
import { desired, namespaceRefusal, type DesiredInput, type WorkflowView } from '../../starter/bridge/cycle/desired.js';
import { allowedFromEnv } from '../../starter/bridge/main.js';
import type { CycleNodeRequestObject, CycleNodeStatusObject } from '../../starter/bridge/cycle/objects.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { CYCLE_FINALIZER, CYCLE_REQUEST_LABEL } from '../../api/cycle-node-request.js';

const now = new Date('2026-01-01T00:00:00Z');
const spec = { nodeGroupName: 'g', selector: { matchLabels: { 'slipway.dev/node-group': 'g' } } };
const WF = 'cnr/ns/r/uid-1';

const request = (over: Partial<CycleNodeRequestObject['metadata']> = {}, rest: Partial<CycleNodeRequestObject> = {}): CycleNodeRequestObject => ({
  apiVersion: 'slipway.dev/v1alpha1',
  kind: 'CycleNodeRequest',
  metadata: { namespace: 'ns', name: 'r', uid: 'uid-1', generation: 1, finalizers: [CYCLE_FINALIZER], ...over },
  spec,
  ...rest,
});

const running: CycleStatus = {
  phase: 'CyclingNodes' as CycleStatus['phase'],
  message: 'cycling',
  nodes: [
    { nodeName: 'n1', phase: 'DrainingPods' as CycleStatus['nodes'][number]['phase'] },
    { nodeName: 'n2', phase: 'Pending' as CycleStatus['nodes'][number]['phase'] },
  ],
  nodesCycled: 0,
  nodesTotal: 2,
};

const input = (obj: CycleNodeRequestObject, workflow: WorkflowView | undefined, statuses: CycleNodeStatusObject[] = []): DesiredInput => ({
  obj,
  workflow,
  nodeStatus: (k) => statuses.find((s) => `${s.metadata.namespace}/${s.metadata.name}` === k),
  now,
});

test('the trust boundary: a request in a namespace the bridge may not act for is refused (status, NamespaceNotAllowed Event, no finalizer, no workflow); allowed ones and running workflows are untouched', () => {
  const d = desired({ ...input(request({ finalizers: [] }), undefined), allowedNamespaces: ['ops'] });
  expect(d.invalidSpec).toBe('namespace ns is not one this bridge may act for (SLIPWAY_ALLOWED_NAMESPACES: ops): no node is touched');
  expect(d.finalizers).toBeUndefined();
  expect(d.status?.next.phase).toBe('Failed');
  expect(d.events.map((e) => `${e.type}/${e.reason}`)).toEqual(['Warning/NamespaceNotAllowed']);
  expect(namespaceRefusal('ops', ['ops'])).toBeUndefined();
  expect(namespaceRefusal('ns', undefined)).toBeUndefined();
  const allowed = desired({ ...input(request({ finalizers: [] }), undefined), allowedNamespaces: ['ns'] });
  expect(allowed.invalidSpec).toBeUndefined();
  expect(allowed.finalizers).toEqual([CYCLE_FINALIZER]);
  // A workflow started before the restriction keeps being mirrored: no surprises mid-cycle.
  const w: WorkflowView = { workflowId: WF, runId: 'r1', generation: 1, state: running };
  expect(desired({ ...input(request(), w), allowedNamespaces: ['ops'] }).invalidSpec).toBeUndefined();
  expect(allowedFromEnv(' ops , team-a ,')).toEqual(['ops', 'team-a']);
  expect(allowedFromEnv('')).toBeUndefined();
});

test('an invalid spec without a workflow gets status Failed/InvalidSpec and one Warning, and no finalizer', () => {
  const d = desired(input(request({ finalizers: [] }, { spec: { nodeGroupName: '' } }), undefined));
  expect(d.invalidSpec).toMatch(/^invalid spec: /);
  expect(d.finalizers).toBeUndefined();
  expect(d.status?.next.phase).toBe('Failed');
  expect(d.status?.next.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('InvalidSpec');
  expect(d.events.map((e) => `${e.type}/${e.reason}`)).toEqual(['Warning/InvalidSpec']);
  // Written once, it is not written again.
  const again = desired(input(request({ finalizers: [] }, { spec: { nodeGroupName: '' }, status: d.status!.next }), undefined));
  expect(again.status).toBeUndefined();
  expect(again.events).toEqual([]);
});

test('a valid spec without a workflow asks for the finalizer first, and nothing else', () => {
  const d = desired(input(request({ finalizers: ['other'] }), undefined));
  expect(d.finalizers).toEqual(['other', CYCLE_FINALIZER]);
  expect(d.status).toBeUndefined();
  expect(d.nodeStatuses).toEqual([]);
});

test("a running workflow's state becomes status and one CycleNodeStatus per node, owned by and labelled with the request", () => {
  const d = desired(input(request(), { workflowId: WF, generation: 1, state: running }));
  expect(d.finalizers).toBeUndefined();
  expect(d.status?.next).toMatchObject({ phase: 'CyclingNodes', workflowId: WF, nodesTotal: 2, observedGeneration: 1 });
  expect(d.events.map((e) => e.reason)).toEqual(['PhaseCyclingNodes']);
  expect(d.nodeStatuses.map((w) => w.name)).toEqual(['r-n1', 'r-n2']);
  const created = d.nodeStatuses[0]!.create!;
  expect(created.metadata.labels).toEqual({ [CYCLE_REQUEST_LABEL]: 'r' });
  expect(created.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: 'uid-1', controller: true })]);
  expect(d.nodeStatuses[0]!.patch).toMatchObject({ phase: 'DrainingPods' });
});

test('node statuses already right are not written, and one owned by an earlier request of the same name is left alone', () => {
  const own = (name: string, phase: string, uid = 'uid-1'): CycleNodeStatusObject => ({
    metadata: { namespace: 'ns', name, generation: 1, ownerReferences: [{ apiVersion: 'slipway.dev/v1alpha1', kind: 'CycleNodeRequest', name: 'r', uid }] },
    status: { phase, observedGeneration: 1 } as CycleNodeStatusObject['status'],
  });
  const d = desired(input(request(), { workflowId: WF, generation: 1, state: running }, [own('r-n1', 'DrainingPods'), own('r-n2', 'Pending', 'uid-0')]));
  expect(d.nodeStatuses).toEqual([]);
});

test('#25.2 a node status carries observedGeneration: a new one 1, an existing one its generation', () => {
  const own = (generation: number): CycleNodeStatusObject => ({
    metadata: { namespace: 'ns', name: 'r-n1', generation, ownerReferences: [{ apiVersion: 'slipway.dev/v1alpha1', kind: 'CycleNodeRequest', name: 'r', uid: 'uid-1' }] },
    status: { phase: 'DrainingPods' },
  });
  const d = desired(input(request(), { workflowId: WF, generation: 1, state: running }, [own(2)]));
  expect(d.nodeStatuses.map((w) => [w.name, w.create ? 'create' : 'patch', w.patch?.observedGeneration])).toEqual([['r-n1', 'patch', 2], ['r-n2', 'create', 1]]);
});

test('a finished request does not create missing node statuses (what is gone stays gone)', () => {
  const done: CycleStatus = { ...running, phase: 'Successful' as CycleStatus['phase'], nodesCycled: 2 };
  const first = desired(input(request(), { workflowId: WF, generation: 1, state: done }));
  const d = desired(input(request({}, { status: first.status!.next }), { workflowId: WF, generation: 1, state: done }));
  expect(d.status).toBeUndefined();
  expect(d.nodeStatuses).toEqual([]);
});

test('a deleted request keeps its finalizer while its workflow runs, and drops it once the workflow is closed', () => {
  const deleting = request({ deletionTimestamp: now, finalizers: ['other', CYCLE_FINALIZER] });
  expect(desired(input(deleting, { workflowId: WF, generation: 1, state: running })).finalizers).toBeUndefined();
  const closed = desired(input(deleting, { workflowId: WF, generation: 1, state: running, closed: { statusName: 'CANCELLED', failure: 'cancelled' } }));
  expect(closed.finalizers).toEqual(['other']);
  expect(closed.status?.next.phase).toBe('Failed');
  expect(desired(input(deleting, undefined)).finalizers).toEqual(['other']);
  expect(desired(input(request({ deletionTimestamp: now, finalizers: ['other'] }), undefined))).toEqual({ events: [], nodeStatuses: [] });
});

describe('#24.2 a pod left on a cycled node', () => {
  const reason = 'returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain); left on the node';
  const message = '4 Pods evicted; 1 Pod left on the Node: app/sticky-4 (returns after eviction ...)';
  const cycled = (nodes: CycleStatus['nodes']): CycleStatus => ({ ...running, phase: 'WaitingTermination' as CycleStatus['phase'], message: 'draining', nodes, nodesCycled: 1 });
  const n1 = { nodeName: 'n1', phase: 'Successful' as const, message, returning: [{ pod: 'app/sticky-4', reason }] };

  test('a Warning PodLeftOnNode on the request per pod, once the node is cycled (deleted) with it; its CycleNodeStatus names it too', () => {
    const before = desired(input(request(), { workflowId: WF, generation: 1, state: running }));
    const obj = request({}, { status: before.status!.next });
    const d = desired(input(obj, { workflowId: WF, generation: 1, state: cycled([n1, running.nodes[1]!]) }));
    expect(d.events.filter((e) => e.reason === 'PodLeftOnNode')).toEqual([
      {
        type: 'Warning',
        reason: 'PodLeftOnNode',
        message: 'Pod app/sticky-4 was on node n1 when the node was deleted: returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain)',
        dedup: `${WF}/PodLeftOnNode/n1/app/sticky-4`,
      },
    ]);
    expect(d.status!.next.nodes![0]).toMatchObject({ name: 'n1', phase: 'Successful', message });
    expect(d.nodeStatuses.find((w) => w.name === 'r-n1')!.patch).toMatchObject({ message, returning: [{ pod: 'app/sticky-4', reason }] });
    // Once per pod and node: a later change of the request (another node moves on) does not repeat it.
    const later = desired(input(request({}, { status: d.status!.next }), { workflowId: WF, generation: 1, state: cycled([n1, { nodeName: 'n2', phase: 'DeletingNode' }]) }));
    expect(later.status).toBeDefined();
    expect(later.events.filter((e) => e.reason === 'PodLeftOnNode')).toEqual([]);
  });
});
