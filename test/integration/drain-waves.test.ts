// Drain waves on the local stack, asserted from the apiserver's audit log: the order of evictions
// and of the pods' final removal by the (kwok) kubelet.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { DrainFixture, evictionsOf, removalsOf } from '../support/drain.js';
import { uniqueName } from '../support/cluster.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const ts = (e: { requestReceivedTimestamp: string }) => new Date(e.requestReceivedTimestamp).getTime();

describe('drain waves', () => {
  const f = new DrainFixture('it-waves');
  const rules = f.c.config.makeApiClient(CustomObjectsApi);
  const ruleNames: string[] = [];
  const rule = async (spec: object) => {
    const name = uniqueName('it-rule');
    ruleNames.push(name);
    await rules.createClusterCustomObject({ group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules', body: { apiVersion: 'slipway.dev/v1alpha1', kind: 'DrainRule', metadata: { name }, spec } });
  };
  beforeAll(() => f.setup());
  afterAll(async () => {
    for (const name of ruleNames) await rules.deleteClusterCustomObject({ group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules', name }).catch(() => undefined);
    await f.teardown();
  });

  test('evicts wave by wave (order -10, then 0, then 10), each wave only after the previous one has left the node', async () => {
    const nodes = [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } }];
    await rule({ drain: { behavior: 'Drain', order: -10 }, nodes, pods: [{ selector: { matchLabels: { tier: 'first' } } }] });
    await rule({ drain: { behavior: 'Drain', order: 10 }, nodes, pods: [{ selector: { matchLabels: { tier: 'last' } } }] });
    await f.deploy('first', 2, { tier: 'first' }, 2);
    await f.deploy('middle', 2, {}, 2);
    await f.deploy('last', 2, { tier: 'last' }, 2);
    await f.waitRunning(6);
    await f.addSpare();

    const handle = await f.startDrain();
    const result = await handle.result();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.completedWaves).toEqual([-10, 0, 10]);
    expect(result.status.evicted).toBe(6);

    const audit = await f.audit();
    const wave = (name: string) => (e: { objectRef?: { name?: string } }) => e.objectRef?.name?.startsWith(`${name}-`);
    const evictions = evictionsOf(audit).filter((e) => e.responseStatus?.code === 201);
    const removals = removalsOf(audit);
    const waves = ['first', 'middle', 'last'].map((w) => ({
      evicted: evictions.filter(wave(w)).map(ts),
      removed: removals.filter(wave(w)).filter((e) => evictions.some((x) => x.objectRef?.name === e.objectRef?.name)).map(ts),
    }));
    for (const w of waves) {
      expect(w.evicted).toHaveLength(2);
      expect(w.removed).toHaveLength(2);
    }
    for (let i = 1; i < waves.length; i++) {
      // The next wave's first eviction comes after the previous wave's last pod left the node.
      expect(Math.min(...waves[i]!.evicted)).toBeGreaterThanOrEqual(Math.max(...waves[i - 1]!.removed));
      // ...and none before its pods were gone (grace 2 s: removal is ≥ ~1 s after eviction).
      expect(Math.max(...waves[i - 1]!.removed)).toBeGreaterThan(Math.min(...waves[i - 1]!.evicted));
    }
    // Each pod evicted once.
    const perPod = new Map<string, number>();
    for (const e of evictionsOf(audit)) perPod.set(e.objectRef!.name!, (perPod.get(e.objectRef!.name!) ?? 0) + 1);
    expect([...perPod.values()].every((n) => n === 1)).toBe(true);

    // Issue 11: a wave wait ends with the next pass's look, so no classify follows it, except the read the drain finishes on.
    const steps: string[] = [];
    const types = new Map<string, string>();
    for (const e of (await f.client.workflow.getHandle(handle.workflowId).fetchHistory()).events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled) {
        types.set(String(e.eventId), scheduled.activityType!.name!);
        steps.push(`schedule ${scheduled.activityType!.name}`);
      }
      const completed = e.activityTaskCompletedEventAttributes;
      if (completed && types.get(String(completed.scheduledEventId)) === 'waitForWave') {
        const result = JSON.parse(Buffer.from(completed.result!.payloads![0]!.data!).toString()) as { snapshot?: { pods: unknown[] } };
        if (result.snapshot) steps.push('looked');
      }
    }
    const after = steps.flatMap((s, i) => (s === 'looked' ? [steps.slice(i + 1).find((x) => x.startsWith('schedule')) ?? 'end'] : []));
    // After the waves -10 and 0 the next wave is evicted at once; after the last, the drain reads
    // again before it leaves Draining (it finishes only on a classify's own read).
    expect(after.length).toBeGreaterThanOrEqual(3);
    expect(after.slice(0, -1)).not.toContain('schedule classifyPods');
    expect(after.at(-1)).toBe('schedule classifyPods');
  });
});

describe('pods the drain must leave alone', () => {
  const f = new DrainFixture('it-leave');
  const rules = f.c.config.makeApiClient(CustomObjectsApi);
  const ruleName = uniqueName('it-skip-rule');
  beforeAll(() => f.setup());
  afterAll(async () => {
    await rules.deleteClusterCustomObject({ group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules', name: ruleName }).catch(() => undefined);
    await f.teardown();
  });

  test('Skip rules, the skip label, DaemonSet pods and static pods are never evicted; the rest is', async () => {
    await rules.createClusterCustomObject({
      group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules',
      body: { apiVersion: 'slipway.dev/v1alpha1', kind: 'DrainRule', metadata: { name: ruleName }, spec: {
        drain: { behavior: 'Skip' },
        nodes: [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } }],
        pods: [{ selector: { matchLabels: { keep: 'by-rule' } } }],
      } },
    });
    await f.deploy('by-rule', 1, { keep: 'by-rule' });
    await f.deploy('by-label', 1, { 'slipway.dev/drain': 'skip' });
    await f.deploy('plain', 2);
    await f.c.apps.createNamespacedDaemonSet({
      namespace: f.ns,
      body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: f.podTemplate({ app: 'agent' }) } },
    });
    // A static pod's mirror, as a kubelet would post it.
    await f.c.core.createNamespacedPod({
      namespace: f.ns,
      body: {
        metadata: { name: `static-${f.node}`, labels: { app: 'static' }, annotations: { 'kubernetes.io/config.mirror': 'hash', 'kubernetes.io/config.source': 'file' } },
        spec: { nodeName: f.node, containers: [{ name: 'c', image: 'registry.invalid/static:1' }] },
      },
    });
    await f.waitRunning(6);
    await f.addSpare();

    const result = await (await f.startDrain()).result();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.evicted).toBe(2);
    const skipped = Object.fromEntries(result.status.skipped.map((s) => [s.pod.split('/')[1]!.replace(/-[a-z0-9]+(-[a-z0-9]+)?$/, ''), s.reason]));
    expect(skipped).toMatchObject({ 'by-rule': `DrainRule ${ruleName}`, 'by-label': 'label slipway.dev/drain=skip', agent: 'DaemonSet-managed' });
    expect(result.status.skipped.find((s) => s.pod === `${f.ns}/static-${f.node}`)?.reason).toBe('static (mirror) pod');

    const evicted = evictionsOf(await f.audit()).map((e) => e.objectRef!.name!);
    expect(evicted).toHaveLength(2);
    expect(evicted.every((n) => n.startsWith('plain-'))).toBe(true);
    const left = (await f.pods()).filter((p) => p.spec?.nodeName === f.node).map((p) => p.metadata!.labels!.app).sort();
    expect(left).toEqual(['agent', 'by-label', 'by-rule', 'static']);
  });
});

describe('a KEP-4212 drain plan', () => {
  const f = new DrainFixture('it-plan');
  const classes = [`${f.group}-low`, `${f.group}-high`];
  beforeAll(async () => {
    await f.setup();
    const scheduling = f.c.config.makeApiClient((await import('@kubernetes/client-node')).SchedulingV1Api);
    await scheduling.createPriorityClass({ body: { metadata: { name: classes[0] }, value: 100 } });
    await scheduling.createPriorityClass({ body: { metadata: { name: classes[1] }, value: 5000 } });
  });
  afterAll(async () => {
    const scheduling = f.c.config.makeApiClient((await import('@kubernetes/client-node')).SchedulingV1Api);
    for (const name of classes) await scheduling.deletePriorityClass({ name }).catch(() => undefined);
    await f.teardown();
  });

  test('evicts by priority in the order of its entries: priority ≤ 100 first, then ≤ 5000, then the rest', async () => {
    const deployWithPriority = async (name: string, priorityClassName?: string) => {
      const t = f.podTemplate({ app: name }, 1);
      await f.c.apps.createNamespacedDeployment({
        namespace: f.ns,
        body: { metadata: { name }, spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { ...t, spec: { ...t.spec, priorityClassName } } } },
      });
    };
    await deployWithPriority('high', classes[1]);
    await deployWithPriority('low', classes[0]);
    await f.waitRunning(4);
    await f.addSpare();
    const result = await (await f.startDrain({ drainPlan: [{ podType: 'Default', podPriority: 100 }, { podType: 'Default', podPriority: 5000 }] })).result();
    expect(result.status.completedWaves).toEqual([0, 1]);
    const evictions = evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 201);
    const removals = removalsOf(await f.audit());
    const lowGone = Math.max(...removals.filter((e) => e.objectRef!.name!.startsWith('low-')).map(ts));
    const highEvicted = evictions.filter((e) => e.objectRef!.name!.startsWith('high-')).map(ts);
    expect(highEvicted).toHaveLength(2);
    expect(Math.min(...highEvicted)).toBeGreaterThanOrEqual(lowGone);
  });
});
