import type { DrainPlanEntry } from '../../api/drain-options.js';
import type { DrainRule, DrainRuleSpec } from '../../api/drain-rule.js';
import { MAX_PRIORITY, type Lane } from '../../api/drain-plan.js';
import { classifyPod, planIndex, podTypeOf, ruleMatchesNode, ruleMatchesPod, type ClassifyContext, type PodFacts } from '../../activities/drain/classify.js';
import { DRAIN_LABEL } from '../../api/drain-plan.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

function pod(over: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: 'app',
    name: 'web-0',
    uid: 'uid-web-0',
    labels: {},
    annotations: {},
    phase: 'Running',
    controller: { kind: 'ReplicaSet', name: 'web-abc', apiVersion: 'apps/v1' },
    hasEmptyDir: false,
    claims: [],
    priority: 0,
    toleratesUnschedulable: false,
    ...over,
  };
}

const dsPod = (over: Partial<PodFacts> = {}) =>
  pod({ namespace: 'kube-system', name: 'agent-x', controller: { kind: 'DaemonSet', name: 'agent', apiVersion: 'apps/v1' }, ...over });

const staticPod = (over: Partial<PodFacts> = {}) =>
  pod({ namespace: 'kube-system', name: 'etcd-n1', annotations: { 'kubernetes.io/config.mirror': 'abc' }, controller: { kind: 'Node', name: 'n1', apiVersion: 'v1' }, ...over });

function ctx(over: Partial<ClassifyContext> & { daemonSets?: string[]; namespaces?: Record<string, Record<string, string>> } = {}): ClassifyContext {
  const { daemonSets = ['kube-system/agent'], namespaces = { app: { team: 'a' }, other: { team: 'b' } }, ...rest } = over;
  return {
    nodeLabels: { pool: 'workers', zone: 'z1' },
    unreachable: false,
    nowMs: NOW,
    daemonSetExists: (ns, name) => daemonSets.includes(`${ns}/${name}`),
    namespaceLabels: (ns) => namespaces[ns],
    rules: [],
    ...rest,
  };
}

const rule = (name: string, spec: Partial<DrainRuleSpec> & { drain: DrainRuleSpec['drain'] }): DrainRule => ({ name, spec: spec as DrainRuleSpec });

const plan = (...entries: Array<Partial<DrainPlanEntry>>): DrainPlanEntry[] => entries.map((e) => ({ podType: 'Default', ...e }));

describe('podTypeOf', () => {
  test('a pod with the mirror annotation is Static, even if owned by a DaemonSet', () => {
    expect(podTypeOf(staticPod())).toBe('Static');
    expect(podTypeOf(dsPod({ annotations: { 'kubernetes.io/config.mirror': 'x' } }))).toBe('Static');
  });

  test('a pod controlled by an apps/ DaemonSet is DaemonSet; a DaemonSet kind from another group is Default', () => {
    expect(podTypeOf(dsPod())).toBe('DaemonSet');
    expect(podTypeOf(pod({ controller: { kind: 'DaemonSet', name: 'x', apiVersion: 'example.com/v1' } }))).toBe('Default');
  });

  test('ReplicaSet-owned and bare pods are Default', () => {
    expect(podTypeOf(pod())).toBe('Default');
    expect(podTypeOf(pod({ controller: undefined }))).toBe('Default');
  });
});

describe('classifyPod: DaemonSet and static pods', () => {
  test('a DaemonSet pod is skipped while its DaemonSet exists', () => {
    const v = classifyPod(dsPod(), ctx());
    expect(v).toMatchObject({ action: 'Skip', reason: 'DaemonSet-managed', podType: 'DaemonSet', order: 0, warnings: [] });
  });

  test('a DaemonSet pod whose DaemonSet no longer exists is drained with an "orphaned" warning', () => {
    const v = classifyPod(dsPod(), ctx({ daemonSets: [] }));
    expect(v.action).toBe('Evict');
    expect(v.order).toBe(0);
    expect(v.warnings).toEqual(['evicting orphaned DaemonSet-managed Pod']);
  });

  test('a finished pod of an existing DaemonSet is deleted, as kubectl and Cluster API do (with or without a drain plan)', () => {
    for (const phase of ['Succeeded', 'Failed']) {
      expect(classifyPod(dsPod({ phase }), ctx())).toMatchObject({ action: 'Delete', podType: 'DaemonSet', reason: `finished (${phase})` });
      expect(classifyPod(dsPod({ phase }), ctx({ drainPlan: plan({}) }))).toMatchObject({ action: 'Delete' });
    }
    expect(classifyPod(dsPod({ phase: 'Running' }), ctx())).toMatchObject({ action: 'Skip' });
  });

  test('a verdict names the pod\'s controller and whether it tolerates the cordon taint', () => {
    expect(classifyPod(pod({ toleratesUnschedulable: true }), ctx())).toMatchObject({ controller: 'ReplicaSet app/web-abc', toleratesUnschedulable: true });
    expect(classifyPod(pod({ controller: undefined }), ctx()).controller).toBeUndefined();
  });

  test('the DaemonSet filter wins over a wait-completed label and over rules', () => {
    const v = classifyPod(dsPod({ labels: { [DRAIN_LABEL]: 'wait-completed' } }), ctx({ rules: [rule('a', { drain: { behavior: 'Drain', order: 5 } })] }));
    expect(v).toMatchObject({ action: 'Skip', reason: 'DaemonSet-managed' });
  });

  test('a mirror (static) pod is skipped', () => {
    expect(classifyPod(staticPod(), ctx())).toMatchObject({ action: 'Skip', reason: 'static (mirror) pod', podType: 'Static' });
  });

  test('the static filter wins over rules that would drain it', () => {
    const v = classifyPod(staticPod(), ctx({ rules: [rule('a', { drain: { behavior: 'Drain', order: 3 } })] }));
    expect(v.action).toBe('Skip');
  });
});

describe('classifyPod: the slipway.dev/drain label', () => {
  test('skip skips the pod', () => {
    const v = classifyPod(pod({ labels: { [DRAIN_LABEL]: 'skip' } }), ctx());
    expect(v).toMatchObject({ action: 'Skip', order: 0, reason: `label ${DRAIN_LABEL}=skip`, warnings: [] });
  });

  test.each(['wait-completed', 'WaitCompleted'])('%s waits for completion at order 0', (value) => {
    const v = classifyPod(pod({ labels: { [DRAIN_LABEL]: value } }), ctx());
    expect(v).toMatchObject({ action: 'WaitCompleted', order: 0, reason: `label ${DRAIN_LABEL}=${value}` });
  });

  test('the label beats a matching rule', () => {
    const rules = [rule('a-drain-late', { drain: { behavior: 'Drain', order: 7 } })];
    expect(classifyPod(pod({ labels: { [DRAIN_LABEL]: 'skip' } }), ctx({ rules })).action).toBe('Skip');
    const wc = classifyPod(pod({ labels: { [DRAIN_LABEL]: 'wait-completed' } }), ctx({ rules }));
    expect(wc).toMatchObject({ action: 'WaitCompleted', order: 0 });
  });

  test('an unknown value is reported as a warning and the rules decide', () => {
    const rules = [rule('a', { drain: { behavior: 'Drain', order: 4 } })];
    const v = classifyPod(pod({ labels: { [DRAIN_LABEL]: 'never' } }), ctx({ rules }));
    expect(v).toMatchObject({ action: 'Evict', order: 4, reason: 'DrainRule a' });
    expect(v.warnings).toEqual([`unknown value "never" of label ${DRAIN_LABEL} ignored`]);
  });

  test('an unknown value without rules falls to the default eviction', () => {
    const v = classifyPod(pod({ labels: { [DRAIN_LABEL]: 'bogus' } }), ctx());
    expect(v).toMatchObject({ action: 'Evict', order: 0, reason: 'default' });
    expect(v.warnings).toHaveLength(1);
  });
});

describe('classifyPod: DrainRules', () => {
  test('the first matching rule by name decides, later ones are ignored', () => {
    const rules = [
      rule('a-wait', { drain: { behavior: 'WaitCompleted' }, pods: [{ selector: { matchLabels: { app: 'db' } } }] }),
      rule('b-order', { drain: { behavior: 'Drain', order: 10 } }),
      rule('c-skip', { drain: { behavior: 'Skip' } }),
    ];
    expect(classifyPod(pod({ labels: { app: 'db' } }), ctx({ rules }))).toMatchObject({ action: 'WaitCompleted', order: 0, reason: 'DrainRule a-wait' });
    expect(classifyPod(pod({ labels: { app: 'web' } }), ctx({ rules }))).toMatchObject({ action: 'Evict', order: 10, reason: 'DrainRule b-order' });
  });

  test('a Drain rule gives its order (negative too); without an order it is 0', () => {
    expect(classifyPod(pod(), ctx({ rules: [rule('r', { drain: { behavior: 'Drain', order: -5 } })] })).order).toBe(-5);
    expect(classifyPod(pod(), ctx({ rules: [rule('r', { drain: { behavior: 'Drain' } })] }))).toMatchObject({ action: 'Evict', order: 0 });
  });

  test('a Skip rule skips and a WaitCompleted rule waits, both at order 0', () => {
    expect(classifyPod(pod(), ctx({ rules: [rule('r', { drain: { behavior: 'Skip' } })] }))).toMatchObject({ action: 'Skip', order: 0, reason: 'DrainRule r' });
    expect(classifyPod(pod(), ctx({ rules: [rule('r', { drain: { behavior: 'WaitCompleted' } })] }))).toMatchObject({ action: 'WaitCompleted', order: 0 });
  });

  test('a rule whose nodes do not match this node does not apply', () => {
    const rules = [rule('r', { drain: { behavior: 'Skip' }, nodes: [{ selector: { matchLabels: { pool: 'gpu' } } }] })];
    expect(classifyPod(pod(), ctx({ rules }))).toMatchObject({ action: 'Evict', reason: 'default' });
  });

  test('no matching rule: default eviction at order 0', () => {
    expect(classifyPod(pod(), ctx())).toMatchObject({ action: 'Evict', order: 0, reason: 'default', podType: 'Default', warnings: [] });
  });
});

describe('ruleMatchesNode', () => {
  test('no node entries match every node', () => {
    expect(ruleMatchesNode(rule('r', { drain: { behavior: 'Skip' } }), {})).toBe(true);
  });

  test('node entries are ORed', () => {
    const r = rule('r', {
      drain: { behavior: 'Skip' },
      nodes: [{ selector: { matchLabels: { pool: 'gpu' } } }, { selector: { matchLabels: { zone: 'z1' } } }],
    });
    expect(ruleMatchesNode(r, { pool: 'workers', zone: 'z1' })).toBe(true);
    expect(ruleMatchesNode(r, { pool: 'gpu', zone: 'z9' })).toBe(true);
    expect(ruleMatchesNode(r, { pool: 'workers', zone: 'z2' })).toBe(false);
  });

  test('requirements within one node selector are ANDed', () => {
    const r = rule('r', { drain: { behavior: 'Skip' }, nodes: [{ selector: { matchLabels: { pool: 'gpu', zone: 'z1' } } }] });
    expect(ruleMatchesNode(r, { pool: 'gpu', zone: 'z1' })).toBe(true);
    expect(ruleMatchesNode(r, { pool: 'gpu', zone: 'z2' })).toBe(false);
  });
});

describe('ruleMatchesPod', () => {
  test('no pod entries match every pod', () => {
    expect(ruleMatchesPod(rule('r', { drain: { behavior: 'Skip' } }), pod(), ctx())).toBe(true);
  });

  test('selector and namespaceSelector within one entry are ANDed', () => {
    const r = rule('r', {
      drain: { behavior: 'Skip' },
      pods: [{ selector: { matchLabels: { app: 'db' } }, namespaceSelector: { matchLabels: { team: 'a' } } }],
    });
    expect(ruleMatchesPod(r, pod({ namespace: 'app', labels: { app: 'db' } }), ctx())).toBe(true);
    expect(ruleMatchesPod(r, pod({ namespace: 'other', labels: { app: 'db' } }), ctx())).toBe(false);
    expect(ruleMatchesPod(r, pod({ namespace: 'app', labels: { app: 'web' } }), ctx())).toBe(false);
  });

  test('pod entries are ORed', () => {
    const r = rule('r', {
      drain: { behavior: 'Skip' },
      pods: [{ selector: { matchLabels: { app: 'db' } } }, { namespaceSelector: { matchLabels: { team: 'b' } } }],
    });
    expect(ruleMatchesPod(r, pod({ namespace: 'app', labels: { app: 'db' } }), ctx())).toBe(true);
    expect(ruleMatchesPod(r, pod({ namespace: 'other', labels: { app: 'web' } }), ctx())).toBe(true);
    expect(ruleMatchesPod(r, pod({ namespace: 'app', labels: { app: 'web' } }), ctx())).toBe(false);
  });

  test('a namespaceSelector does not match a namespace whose labels are unknown', () => {
    const r = rule('r', { drain: { behavior: 'Skip' }, pods: [{ namespaceSelector: { matchLabels: { team: 'a' } } }] });
    expect(ruleMatchesPod(r, pod({ namespace: 'ghost' }), ctx())).toBe(false);
  });
});

describe('classifyPod: warnings, finished and terminating pods', () => {
  test('a pod with emptyDir is drained with a local-storage warning', () => {
    const v = classifyPod(pod({ hasEmptyDir: true }), ctx());
    expect(v.action).toBe('Evict');
    expect(v.warnings).toEqual(['evicting Pod with local storage (emptyDir)']);
  });

  test('a pod without a controller is drained with a warning', () => {
    const v = classifyPod(pod({ controller: undefined }), ctx());
    expect(v.action).toBe('Evict');
    expect(v.warnings).toEqual(['evicting Pod that has no controller']);
  });

  test('a skipped pod carries no warnings', () => {
    expect(classifyPod(pod({ controller: undefined, hasEmptyDir: true, labels: { [DRAIN_LABEL]: 'skip' } }), ctx()).warnings).toEqual([]);
  });

  test.each(['Succeeded', 'Failed'])('a %s pod is deleted rather than evicted, without warnings', (phase) => {
    const v = classifyPod(pod({ phase, controller: undefined, hasEmptyDir: true }), ctx());
    expect(v).toMatchObject({ action: 'Delete', reason: `finished (${phase})`, phase, warnings: [] });
  });

  test('a finished pod that would be waited for is deleted instead', () => {
    expect(classifyPod(pod({ phase: 'Succeeded', labels: { [DRAIN_LABEL]: 'wait-completed' } }), ctx()).action).toBe('Delete');
  });

  test('a finished pod keeps its Drain rule order', () => {
    const v = classifyPod(pod({ phase: 'Failed' }), ctx({ rules: [rule('r', { drain: { behavior: 'Drain', order: 3 } })] }));
    expect(v).toMatchObject({ action: 'Delete', order: 3 });
  });

  test('a finished pod that is skipped by label stays skipped', () => {
    expect(classifyPod(pod({ phase: 'Succeeded', labels: { [DRAIN_LABEL]: 'skip' } }), ctx()).action).toBe('Skip');
  });

  test('on an unreachable node a pod terminating for more than 5 s is skipped', () => {
    const v = classifyPod(pod({ deletionTimestampMs: NOW - 6_000 }), ctx({ unreachable: true }));
    expect(v).toMatchObject({ action: 'Skip', reason: 'terminating on an unreachable node', terminating: true });
  });

  test('on an unreachable node a pod terminating for 1 s is still waited for', () => {
    const v = classifyPod(pod({ deletionTimestampMs: NOW - 1_000 }), ctx({ unreachable: true }));
    expect(v).toMatchObject({ action: 'Evict', terminating: true });
  });

  test('on a reachable node a long-terminating pod is not skipped', () => {
    expect(classifyPod(pod({ deletionTimestampMs: NOW - 600_000 }), ctx()).action).toBe('Evict');
  });

  test('terminating follows deletionTimestamp; identity, phase and claims are passed through', () => {
    const p = pod({ namespace: 'db', name: 'pg-0', uid: 'u-1', claims: ['db/data-pg-0', 'db/wal-pg-0'], phase: 'Pending' });
    expect(classifyPod(p, ctx())).toMatchObject({ namespace: 'db', name: 'pg-0', uid: 'u-1', terminating: false, phase: 'Pending', claims: ['db/data-pg-0', 'db/wal-pg-0'] });
    expect(classifyPod({ ...p, deletionTimestampMs: NOW }, ctx()).terminating).toBe(true);
  });
});

describe('planIndex', () => {
  const entries = plan(
    { podType: 'Default', podPriority: 100, podSelector: { matchLabels: { tier: 'front' } } },
    { podType: 'Default', podPriority: 1000 },
    { podType: 'DaemonSet' },
  );

  test('the first entry whose type, priority ceiling and selector all match', () => {
    expect(planIndex(entries, pod({ priority: 50, labels: { tier: 'front' } }), 'Default')).toBe(0);
    expect(planIndex(entries, pod({ priority: 50, labels: { tier: 'back' } }), 'Default')).toBe(1);
    expect(planIndex(entries, pod({ priority: 500, labels: { tier: 'front' } }), 'Default')).toBe(1);
    expect(planIndex(entries, dsPod(), 'DaemonSet')).toBe(2);
  });

  test('the priority ceiling is inclusive', () => {
    expect(planIndex(entries, pod({ priority: 100, labels: { tier: 'front' } }), 'Default')).toBe(0);
    expect(planIndex(entries, pod({ priority: 1000 }), 'Default')).toBe(1);
  });

  test('no entry matches: undefined', () => {
    expect(planIndex(entries, pod({ priority: 1001 }), 'Default')).toBeUndefined();
    expect(planIndex(entries, staticPod(), 'Static')).toBeUndefined();
  });
});

describe('classifyPod with a drain plan (KEP-4212)', () => {
  test('the order is the index of the first matching entry, overriding rule orders', () => {
    const drainPlan = plan({ podSelector: { matchLabels: { tier: 'front' } } }, { podPriority: 1000 });
    const rules = [rule('r', { drain: { behavior: 'Drain', order: 42 } })];
    expect(classifyPod(pod({ labels: { tier: 'front' } }), ctx({ drainPlan, rules })).order).toBe(0);
    expect(classifyPod(pod({ labels: { tier: 'back' }, priority: 10 }), ctx({ drainPlan, rules })).order).toBe(1);
  });

  test('a Default pod matching no entry goes last, at the plan length', () => {
    const drainPlan = plan({ podPriority: 100 }, { podSelector: { matchLabels: { tier: 'front' } } });
    const v = classifyPod(pod({ priority: 2000_000_000 }), ctx({ drainPlan }));
    expect(v).toMatchObject({ action: 'Evict', order: 2 });
  });

  test('a DaemonSet pod is skipped when the plan has no DaemonSet entry', () => {
    expect(classifyPod(dsPod(), ctx({ drainPlan: plan({}) }))).toMatchObject({ action: 'Skip', order: 0 });
  });

  test('a DaemonSet pod is drained at its entry when the plan has a DaemonSet entry', () => {
    const drainPlan = plan({}, { podType: 'DaemonSet' });
    expect(classifyPod(dsPod(), ctx({ drainPlan }))).toMatchObject({ action: 'Evict', order: 1, podType: 'DaemonSet' });
  });

  test('a DaemonSet pod not matching the plan\'s DaemonSet entries is skipped, not put last', () => {
    const drainPlan = plan({ podType: 'DaemonSet', podSelector: { matchLabels: { app: 'logs' } } });
    expect(classifyPod(dsPod({ labels: { app: 'agent' } }), ctx({ drainPlan }))).toMatchObject({ action: 'Skip', order: 0, reason: 'DaemonSet pod matches no drainPlan entry' });
  });

  test('a static pod is skipped without a Static entry and drained at its entry with one', () => {
    expect(classifyPod(staticPod(), ctx({ drainPlan: plan({}) })).action).toBe('Skip');
    expect(classifyPod(staticPod(), ctx({ drainPlan: plan({ podType: 'Static' }, {}) }))).toMatchObject({ action: 'Evict', order: 0, podType: 'Static' });
  });

  test('a skip label still wins over the plan', () => {
    const drainPlan = plan({});
    expect(classifyPod(pod({ labels: { [DRAIN_LABEL]: 'skip' } }), ctx({ drainPlan }))).toMatchObject({ action: 'Skip', order: 0 });
  });

  test('a wait-completed pod keeps its action and takes the plan order', () => {
    const drainPlan = plan({ podSelector: { matchLabels: { x: 'y' } } }, {});
    expect(classifyPod(pod({ labels: { [DRAIN_LABEL]: 'wait-completed' } }), ctx({ drainPlan }))).toMatchObject({ action: 'WaitCompleted', order: 1 });
  });
});

describe('classifyPod in targets mode (a NodeMaintenance drain)', () => {
  const D = (podPriority: number, podSelector?: Lane['podSelector']): Lane => (podSelector ? { podType: 'Default', podPriority, podSelector } : { podType: 'Default', podPriority });
  const DS: Lane = { podType: 'DaemonSet', podPriority: MAX_PRIORITY };
  const S: Lane = { podType: 'Static', podPriority: MAX_PRIORITY };

  test('a Default pod matching no lane is left alone: untargeted, its action kept for later, no warnings', () => {
    const v = classifyPod(pod({ priority: 5000, controller: undefined }), ctx({ targets: [D(1000)] }));
    expect(v).toMatchObject({ action: 'Evict', targeted: false, podType: 'Default', warnings: [] });
    expect(v.kept).toBeUndefined();
  });

  test('a Default pod matching a lane (priority ≤ lane, selector matching) is targeted and evicted', () => {
    expect(classifyPod(pod({ priority: 1000 }), ctx({ targets: [D(1000)] }))).toMatchObject({ action: 'Evict', targeted: true });
    const lanes = [D(100), D(2000, { matchLabels: { app: 'pg' } })];
    expect(classifyPod(pod({ priority: 1500, labels: { app: 'pg' } }), ctx({ targets: lanes }))).toMatchObject({ targeted: true });
    expect(classifyPod(pod({ priority: 1500, labels: { app: 'redis' } }), ctx({ targets: lanes }))).toMatchObject({ targeted: false });
  });

  test('Default lanes never target DaemonSet or static pods; untargeted they are pending, not kept', () => {
    const lanes = [D(MAX_PRIORITY)];
    expect(classifyPod(dsPod(), ctx({ targets: lanes }))).toMatchObject({ targeted: false, podType: 'DaemonSet' });
    expect(classifyPod(staticPod(), ctx({ targets: lanes }))).toMatchObject({ targeted: false, podType: 'Static' });
  });

  test('a targeted DaemonSet pod is Kept, never evicted: "DaemonSet pod without evacuator: left for node shutdown" (NM-6.7)', () => {
    const v = classifyPod(dsPod(), ctx({ targets: [D(MAX_PRIORITY), DS] }));
    expect(v).toMatchObject({ action: 'Skip', kept: true, targeted: true, reason: 'DaemonSet pod without evacuator: left for node shutdown', order: 0 });
  });

  test('a targeted static pod is Kept: "Static pod without evacuator: left for node shutdown"', () => {
    const v = classifyPod(staticPod(), ctx({ targets: [D(MAX_PRIORITY), DS, S] }));
    expect(v).toMatchObject({ action: 'Skip', kept: true, reason: 'Static pod without evacuator: left for node shutdown' });
  });

  test('a drainPlan naming DaemonSet pods does not make them evictable in targets mode (the plan is ignored)', () => {
    const v = classifyPod(dsPod(), ctx({ targets: [DS], drainPlan: plan({ podType: 'DaemonSet' }) }));
    expect(v).toMatchObject({ action: 'Skip', kept: true });
  });

  test('an orphaned DaemonSet pod is Default: a Default lane targets it and it is evicted with the orphan warning', () => {
    const v = classifyPod(dsPod(), ctx({ targets: [D(MAX_PRIORITY)], daemonSets: [] }));
    expect(v).toMatchObject({ action: 'Evict', targeted: true, podType: 'Default', warnings: ['evicting orphaned DaemonSet-managed Pod'] });
  });

  test('the skip label and Skip rules still apply, targeted or not, and a skipped DaemonSet pod is Skip, not Kept (NM-7.1)', () => {
    const lanes = [D(MAX_PRIORITY), DS];
    expect(classifyPod(pod({ labels: { [DRAIN_LABEL]: 'skip' } }), ctx({ targets: lanes }))).toMatchObject({ action: 'Skip', targeted: true, reason: `label ${DRAIN_LABEL}=skip` });
    const rules = [rule('keep', { drain: { behavior: 'Skip' } })];
    expect(classifyPod(pod({ priority: 5 }), ctx({ targets: [D(1)], rules }))).toMatchObject({ action: 'Skip', targeted: false, reason: 'DrainRule keep' });
    const ds = classifyPod(dsPod({ labels: { [DRAIN_LABEL]: 'skip' } }), ctx({ targets: lanes }));
    expect(ds).toMatchObject({ action: 'Skip', reason: `label ${DRAIN_LABEL}=skip` });
    expect(ds.kept).toBeUndefined();
  });

  test('a wait-completed pod is WaitCompleted once targeted, and untargeted before (NM-7.2)', () => {
    const job = pod({ priority: 5000, labels: { [DRAIN_LABEL]: 'wait-completed' } });
    expect(classifyPod(job, ctx({ targets: [D(1000)] }))).toMatchObject({ action: 'WaitCompleted', targeted: false });
    expect(classifyPod(job, ctx({ targets: [D(10_000)] }))).toMatchObject({ action: 'WaitCompleted', targeted: true });
    // Finished once targeted: deleted, as finished pods are; finished but untargeted: left alone.
    expect(classifyPod({ ...job, phase: 'Succeeded' }, ctx({ targets: [D(10_000)] }))).toMatchObject({ action: 'Delete', targeted: true });
    expect(classifyPod({ ...job, phase: 'Succeeded' }, ctx({ targets: [D(1000)] }))).toMatchObject({ targeted: false });
  });

  test('DrainRule orders give the sub-waves inside the targets; the drainPlan index is not used (NM-7.3)', () => {
    const rules = [rule('a-first', { drain: { behavior: 'Drain', order: 0 }, pods: [{ selector: { matchLabels: { app: 'a' } } }] }), rule('b-later', { drain: { behavior: 'Drain', order: 100 }, pods: [{ selector: { matchLabels: { app: 'b' } } }] })];
    const c = ctx({ targets: [D(MAX_PRIORITY)], rules, drainPlan: plan({ podSelector: { matchLabels: { app: 'b' } } }, {}) });
    expect(classifyPod(pod({ labels: { app: 'a' } }), c)).toMatchObject({ action: 'Evict', order: 0, targeted: true });
    expect(classifyPod(pod({ labels: { app: 'b' } }), c)).toMatchObject({ action: 'Evict', order: 100, targeted: true });
  });

  test('without targets, verdicts carry no targeted or kept flag', () => {
    const v = classifyPod(pod(), ctx());
    expect('targeted' in v).toBe(false);
    expect('kept' in v).toBe(false);
  });
});
