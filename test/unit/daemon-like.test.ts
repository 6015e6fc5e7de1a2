// NM-6.6 / NM-6.7: daemon-like pods (custom controllers' pods that behave like DaemonSet pods).
import type { V1Pod } from '@kubernetes/client-node';
import { MAX_PRIORITY, type Lane } from '../../api/drain-plan.js';
import { classifyPod, daemonLikeRule, keptReason, podTypeOf, type ClassifyContext, type PodFacts } from '../../activities/drain/classify.js';
import { pinnedTo, podFacts } from '../../activities/drain/pods.js';
import { POD_TYPE_LABEL } from '../../api/drain-plan.js';

const cds = { kind: 'ConfiguredDaemonSet', name: 'neutron-l2', apiVersion: 'apps.yaook.cloud/v1' };

function pod(over: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: 'yaook',
    name: 'l2-five',
    uid: 'uid-l2',
    labels: {},
    annotations: {},
    phase: 'Running',
    controller: cds,
    hasEmptyDir: false,
    claims: [],
    priority: 0,
    toleratesUnschedulable: true,
    pinnedTo: 'five',
    ...over,
  };
}

const ctx = (over: Partial<ClassifyContext> = {}): ClassifyContext => ({
  nodeLabels: {},
  unreachable: false,
  nowMs: 0,
  daemonSetExists: () => false,
  namespaceLabels: () => undefined,
  rules: [],
  ...over,
});

const v1Pod = (spec: Partial<NonNullable<V1Pod['spec']>>): V1Pod => ({ metadata: { namespace: 'yaook', name: 'p', uid: 'u' }, spec: { containers: [], nodeName: 'five', ...spec } });
const pinByField = (node: string) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] } },
});

describe('NM-6.6 daemon-like pods', () => {
  test('NM-6.6 (b): the label slipway.dev/pod-type=DaemonSet makes any pod DaemonSet-type, even bare and unpinned', () => {
    const p = pod({ labels: { [POD_TYPE_LABEL]: 'DaemonSet' }, controller: undefined, pinnedTo: undefined, toleratesUnschedulable: false });
    expect(podTypeOf(p)).toBe('DaemonSet');
    expect(daemonLikeRule(p)).toBe(`daemon-like: label ${POD_TYPE_LABEL}=DaemonSet`);
  });

  test('NM-6.6 (c): a custom controller\'s pod pinned to its node and tolerating unschedulable is DaemonSet-type; the reason names the rule', () => {
    expect(podTypeOf(pod())).toBe('DaemonSet');
    expect(daemonLikeRule(pod())).toBe('daemon-like: pinned to five, tolerates unschedulable (ConfiguredDaemonSet neutron-l2)');
  });

  test('NM-6.6 (c) needs all three: a controller, pinning and the toleration', () => {
    expect(podTypeOf(pod({ controller: undefined }))).toBe('Default');
    expect(podTypeOf(pod({ pinnedTo: undefined }))).toBe('Default');
    expect(podTypeOf(pod({ toleratesUnschedulable: false }))).toBe('Default');
  });

  test('NM-6.6: slipway.dev/pod-type=Default opts a pod out of (c), not out of (a)', () => {
    expect(podTypeOf(pod({ labels: { [POD_TYPE_LABEL]: 'Default' } }))).toBe('Default');
    expect(podTypeOf(pod({ labels: { [POD_TYPE_LABEL]: 'Default' }, controller: { kind: 'DaemonSet', name: 'a', apiVersion: 'apps/v1' } }))).toBe('DaemonSet');
  });

  test('NM-6.6 pinning: a single matchFields metadata.name In [own node] term, or nodeSelector kubernetes.io/hostname=own node', () => {
    expect(pinnedTo(v1Pod({ affinity: pinByField('five') }))).toBe('five');
    expect(pinnedTo(v1Pod({ nodeSelector: { 'kubernetes.io/hostname': 'five' } }))).toBe('five');
    expect(pinnedTo(v1Pod({ affinity: pinByField('six') }))).toBeUndefined(); // pinned elsewhere
    expect(pinnedTo(v1Pod({ nodeSelector: { 'kubernetes.io/hostname': 'six' } }))).toBeUndefined();
    expect(pinnedTo(v1Pod({}))).toBeUndefined();
    const twoTerms = pinByField('five');
    twoTerms.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.push({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['six'] }] });
    expect(pinnedTo(v1Pod({ affinity: twoTerms }))).toBeUndefined(); // could run on another node
  });

  test('NM-6.6 tolerations: explicit node.kubernetes.io/unschedulable:NoSchedule or Exists with an empty key; a NoExecute-only one does not count', () => {
    const tol = (tolerations: NonNullable<V1Pod['spec']>['tolerations']) => podFacts(v1Pod({ tolerations })).toleratesUnschedulable;
    expect(tol([{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }])).toBe(true);
    expect(tol([{ operator: 'Exists' }])).toBe(true);
    expect(tol([{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }])).toBe(false);
    expect(tol([])).toBe(false);
  });

  test('NM-6.6: podFacts of a pinned, tolerating custom-controller pod classify it DaemonSet-type', () => {
    const v = v1Pod({ affinity: pinByField('five'), tolerations: [{ operator: 'Exists' }] });
    v.metadata!.ownerReferences = [{ ...cds, uid: 'o', controller: true }];
    expect(podTypeOf(podFacts(v))).toBe('DaemonSet');
  });

  test('NM-6.6: a daemon-like pod is not orphaned by a missing apps/DaemonSet: skipped by a plain drain, with its rule as reason', () => {
    expect(classifyPod(pod(), ctx())).toMatchObject({ action: 'Skip', podType: 'DaemonSet', reason: daemonLikeRule(pod()) });
  });
});

describe('NM-6.7 daemon-like pods in drains', () => {
  const DS: Lane = { podType: 'DaemonSet', podPriority: MAX_PRIORITY };
  const D: Lane = { podType: 'Default', podPriority: MAX_PRIORITY };

  test('NM-6.7: a NodeMaintenance never evicts a daemon-like pod: Default lanes do not target it; a DaemonSet lane keeps it', () => {
    expect(classifyPod(pod(), ctx({ targets: [D] }))).toMatchObject({ targeted: false, podType: 'DaemonSet' });
    const v = classifyPod(pod(), ctx({ targets: [D, DS] }));
    expect(v).toMatchObject({ targeted: true, kept: true, action: 'Skip' });
    expect(v.reason).toBe(`${keptReason('DaemonSet')} (${daemonLikeRule(pod())})`);
  });

  test('NM-5.8: a targeted daemon-like pod with an evacuator is evacuated, not kept; an invalid registration keeps it kept, with a warning', () => {
    const withEvac = pod({ annotations: { 'evacuator.slipway.dev/l2-operator': '10' } });
    expect(classifyPod(withEvac, ctx({ targets: [D, DS] }))).toMatchObject({ targeted: true, action: 'Evict', podType: 'DaemonSet', evacuators: ['l2-operator'] });
    expect(classifyPod(withEvac, ctx({ targets: [D, DS] })).kept).toBeUndefined();
    const bad = classifyPod(pod({ annotations: { 'evacuator.slipway.dev/l2-operator': 'high' } }), ctx({ targets: [D, DS] }));
    expect(bad).toMatchObject({ action: 'Skip', kept: true });
    expect(bad.evacuators).toBeUndefined();
  });

  test('evacuator registrations on a Default pod: valid ones ordered by priority then name; an invalid priority is reported and, with none valid, the pod is evicted', () => {
    const web = (annotations: Record<string, string>) => pod({ controller: { kind: 'ReplicaSet', name: 'web-abc', apiVersion: 'apps/v1' }, pinnedTo: undefined, annotations });
    expect(classifyPod(web({ 'evacuator.slipway.dev/b': '5', 'evacuator.slipway.dev/a': '5', 'evacuator.slipway.dev/c': '100' }), ctx()).evacuators).toEqual(['c', 'a', 'b']);
    for (const bad of ['-1', '100001', '1.5', 'high', '']) {
      const v = classifyPod(web({ 'evacuator.slipway.dev/db-op': bad }), ctx());
      expect(v).toMatchObject({ action: 'Evict' });
      expect(v.evacuators).toBeUndefined();
      expect(v.warnings).toContainEqual(expect.stringContaining('the pod is evicted instead'));
    }
    const mixed = classifyPod(web({ 'evacuator.slipway.dev/db-op': 'x', 'evacuator.slipway.dev/ok': '1' }), ctx());
    expect(mixed.evacuators).toEqual(['ok']);
    expect(mixed.warnings).toContainEqual(expect.stringContaining('; ignored'));
  });

  test('NM-6.7: a Deployment pod with a tolerate-all toleration but no pinning is Default and evicted by a maintenance', () => {
    const web = pod({ controller: { kind: 'ReplicaSet', name: 'web-abc', apiVersion: 'apps/v1' }, pinnedTo: undefined });
    expect(classifyPod(web, ctx({ targets: [D] }))).toMatchObject({ targeted: true, action: 'Evict', podType: 'Default' });
  });

  test('NM-6.7: a CycleNodeRequest/CLI drainPlan entry naming DaemonSet still evicts a daemon-like pod', () => {
    expect(classifyPod(pod(), ctx({ drainPlan: [{ podType: 'Default' }, { podType: 'DaemonSet' }] }))).toMatchObject({ action: 'Evict', order: 1, podType: 'DaemonSet' });
  });
});
