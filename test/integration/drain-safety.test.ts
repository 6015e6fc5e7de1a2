// Defects found by trying drains as a user would (issue: a drain that reports success with pods
// still on the node, an eviction loop, a stuck drain that hides why), each reproduced on the local
// stack: a DrainRule that turns invalid mid-drain holds only the drains it could affect; pods that
// keep coming back to the cordoned node are not chased; the status lists only pods still on the
// node; a PDB-blocked drain is one pending activity named for the PDB, not a growing history.
import { CustomObjectsApi, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { createSnapshotActivities } from '../../activities/drain/snapshot.js';
import { untilDrainRulesChange } from '../../activities/drain/rules-wait.js';
import { agreeingRules, drainRuleCache } from '../../activities/drain/rules-cache.js';
import { jest } from '@jest/globals';
import { apiStatus, type Kube } from '../../kube/client.js';
import { drainStatusQuery } from '../../workflows/messages.js';
import { kubeConfigWithToken, kubeFrom } from '../support/bridge.js';
import { uniqueName } from '../support/cluster.js';
import { DrainFixture, evictionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { createDrainRule, deleteDrainRule, storeUnvalidatedDrainRule } from '../support/drain-rules.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the waits on DrainRules start from the rules the drain judged by', () => {
  const f = new DrainFixture('it-rulesseen');
  const rule = uniqueName('it-seen-rule');
  beforeAll(() => f.setup({ worker: false }));
  afterAll(async () => {
    await deleteDrainRule(f.c, rule);
    await f.teardown();
  });

  test('a rule created after the classify read and before the wait ends the wait at once; with nothing changed since the read, the wait runs to its timeout', async () => {
    const { classifyPods } = createSnapshotActivities(f.c);
    const before = await classifyPods({ nodeName: f.node });
    expect(before.drainRulesSeen).toMatch(/^[0-9a-f]{16}$/);
    const unchanged = await untilDrainRulesChange(f.c, { timeoutMs: 1500, since: before.drainRulesSeen });
    expect(unchanged.met).toBe(false);

    await createDrainRule(f.c, rule, { nodes: [{ selector: { matchLabels: { 'slipway.dev/never': 'x' } } }], pods: [{ selector: { matchLabels: { app: 'none' } } }], drain: { behavior: 'Skip' } });
    const t0 = Date.now();
    const changed = await untilDrainRulesChange(f.c, { timeoutMs: 10_000, since: before.drainRulesSeen });
    expect(changed.met).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // Without the baseline the same wait would miss it: its first list already has the rule.
    expect((await untilDrainRulesChange(f.c, { timeoutMs: 1500 })).met).toBe(false);
    expect((await classifyPods({ nodeName: f.node })).drainRulesSeen).not.toBe(before.drainRulesSeen);
  });
});

/**
 * The DrainRule lists this file's clients made besides the cache's own (its first list and its
 * relists), from a spy on the client: other test files' caches, running in the same process with
 * their own modules, are not counted.
 */
const listCalls = jest.spyOn(CustomObjectsApi.prototype, 'listClusterCustomObject');
const listsMark = (kube: Kube) => ({ calls: listCalls.mock.calls.filter(([r]) => r.plural === 'drainrules').length, cache: drainRuleCache(kube).lists });
function drainRuleListsSince(kube: Kube, before: { calls: number; cache: number }): number {
  const now = listsMark(kube);
  return now.calls - before.calls - (now.cache - before.cache);
}

describe("a drain reads DrainRules from the worker's cache while they are unchanged since its last look", () => {
  const f = new DrainFixture('it-rulecache');
  const rule = uniqueName('it-cache-rule');
  beforeAll(() => f.setup({ worker: false }));
  afterAll(async () => {
    await deleteDrainRule(f.c, rule);
    await f.teardown();
  });

  test('a classify with an unchanged baseline lists nothing; without a baseline, or once a rule changed, it lists', async () => {
    const { classifyPods } = createSnapshotActivities(f.c);
    const first = await classifyPods({ nodeName: f.node }); // no baseline: lists (and starts the cache)
    await waitFor('the cache synced', async () => agreeingRules(f.c, first.drainRulesSeen) !== undefined);

    let offset = listsMark(f.c);
    const again = await classifyPods({ nodeName: f.node, drainRulesSeen: first.drainRulesSeen });
    expect(again.drainRulesSeen).toBe(first.drainRulesSeen);
    expect(await drainRuleListsSince(f.c, offset)).toBe(0);

    offset = listsMark(f.c);
    await classifyPods({ nodeName: f.node }); // a drain's first look never trusts the cache
    expect(await drainRuleListsSince(f.c, offset)).toBe(1);

    await createDrainRule(f.c, rule, { nodes: [{ selector: { matchLabels: { 'slipway.dev/never': 'x' } } }], pods: [{ selector: { matchLabels: { app: 'none' } } }], drain: { behavior: 'Skip' } });
    await waitFor('the cache saw the rule', async () => agreeingRules(f.c, first.drainRulesSeen) === undefined);
    offset = listsMark(f.c);
    const changed = await classifyPods({ nodeName: f.node, drainRulesSeen: first.drainRulesSeen });
    expect(changed.drainRulesSeen).not.toBe(first.drainRulesSeen);
    expect(await drainRuleListsSince(f.c, offset)).toBe(1);
    // The wait on the cache: nothing changed since the new baseline, so it runs to its timeout without a list.
    offset = listsMark(f.c);
    expect((await untilDrainRulesChange(f.c, { timeoutMs: 1000, since: changed.drainRulesSeen })).met).toBe(false);
    expect(await drainRuleListsSince(f.c, offset)).toBe(0);
  });
});

describe('a DrainRule that turns invalid while a drain is blocked by a PDB', () => {
  const f = new DrainFixture('it-heldrule');
  const other = new DrainFixture('it-heldother');
  const rule = uniqueName('it-invalid-rule');
  beforeAll(async () => {
    await f.setup();
    await other.setup({ worker: false });
  });
  afterAll(async () => {
    await deleteDrainRule(f.c, rule);
    await other.teardown();
    await f.teardown();
  });

  test('holds the drains it could affect (no success with pods on the node), names the rule, leaves other drains alone, and resumes once it is deleted', async () => {
    await f.deploy('web', 2);
    const pods = await f.waitRunning(2);
    await f.pdb('web', 2);
    await f.addSpare();
    const handle = await f.startDrain();
    await waitFor('the drain blocked by the PDB', async () => ((await handle.query(drainStatusQuery)).wave?.blocked.length ?? 0) > 0);

    // order 2^31 is outside int32: the zod check refuses it, so the rule is invalid at drain time.
    await storeUnvalidatedDrainRule(f.c, rule, {
      drain: { behavior: 'Drain', order: 2 ** 31 },
      nodes: [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } }],
      pods: [{ selector: { matchLabels: { app: 'web' } } }],
    });
    const held = await waitFor('the drain held by the rule', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.heldBy.length ? s : undefined;
    });
    expect(held.heldBy[0]).toContain(`DrainRule ${rule} is invalid: spec.drain.order`);
    expect(held.message).toContain('Drain held');
    const heldAt = Date.now();
    await sleep(8000);
    // Before the fix the drain finished here as "Drain completed: 0 Pods evicted".
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const still = (await f.pods('app=web')).filter((p) => p.spec?.nodeName === f.node && !p.metadata?.deletionTimestamp);
    expect(still.map((p) => p.metadata!.uid).sort()).toEqual(pods.map((p) => p.metadata!.uid).sort());

    // A drain the rule cannot affect (another node group) goes on and finishes.
    await other.deploy('api', 1);
    await other.waitRunning(1);
    const otherResult = await (await f.client.workflow.start('drainWorkflow', {
      taskQueue: f.taskQueue, workflowId: uniqueName('drain-other'), args: [{ nodeName: other.node }],
    })).result() as { status: { phase: string; evicted: number; heldBy: string[] } };
    expect(otherResult.status).toMatchObject({ phase: 'Drained', evicted: 1, heldBy: [] });

    // While held, nothing was evicted.
    const heldEvictions = evictionsOf(await f.audit()).filter((e) => new Date(e.requestReceivedTimestamp).getTime() > heldAt + 2000);
    expect(heldEvictions).toHaveLength(0);

    await deleteDrainRule(f.c, rule);
    await waitFor('the drain back to waiting on the PDB', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.heldBy.length === 0 && (s.wave?.blocked.length ?? 0) > 0;
    });
    await f.c.apps.patchNamespacedDeployment({ name: 'web', namespace: f.ns, body: { spec: { replicas: 3 } } }, mergePatch);
    const result = await handle.result();
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 2, heldBy: [] });
  });
});

describe('pods that come back to the cordoned node', () => {
  const f = new DrainFixture('it-returns');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('are evicted at most 3 more times, then left and named with the reason; the drain ends', async () => {
    await f.stickyDeployment('sticky');
    await f.waitRunning(1);
    const started = Date.now();
    const handle = await f.startDrain();
    // While it loops, the status says why: the pod came back, how often it was evicted, the pause.
    const seen = new Set<string>();
    const done = handle.result();
    let over = false;
    void done.finally(() => (over = true)).catch(() => undefined);
    while (!over) {
      const s = await handle.query(drainStatusQuery).catch(() => undefined);
      if (s) seen.add(s.message);
      await sleep(200);
    }
    const result = await done;
    expect(Date.now() - started).toBeLessThan(90_000);
    expect([...seen].find((m) => /came back after eviction \(Pods of ReplicaSet \S+ evicted [23] times in this drain; [12] of at most 3 returns evicted\); evicted again after a pause/.test(m))).toBeDefined();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.returning).toHaveLength(1);
    expect(result.status.returning[0]!.reason).toContain('returns after eviction: tolerates node.kubernetes.io/unschedulable');
    expect(result.status.message).toContain('1 Pod left on the Node');
    const evictions = evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 201 && e.objectRef?.name?.startsWith('sticky-'));
    // The pod found at the start, plus at most three that came back (before: one a second, for minutes).
    expect(evictions.length).toBeGreaterThanOrEqual(2);
    expect(evictions.length).toBeLessThanOrEqual(4);
    expect(new Set(evictions.map((e) => e.objectRef!.name)).size).toBe(evictions.length); // each pod once
  });
});

describe('while a WaitCompleted pod runs', () => {
  const f = new DrainFixture('it-waitlist');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('the status lists only pods still on the node: evicted pods that have left are not "still not removed"', async () => {
    await f.waitCompletedJob('backup', '60s');
    await f.deploy('web', 2);
    await f.waitRunning(1, 'app=backup');
    await f.waitRunning(3);
    await f.addSpare();
    const handle = await f.startDrain();
    await waitFor('the web pods gone from the node', async () => {
      const web = (await f.pods('app=web')).filter((p) => p.spec?.nodeName === f.node);
      return web.length === 0 && evictionsOf(await f.audit()).length >= 2;
    });
    const s = await waitFor('a status without the departed pods', async () => {
      const st = await handle.query(drainStatusQuery);
      return st.wave && !st.wave.evicting.some((p) => p.includes('/web-')) ? st : undefined;
    }, { timeoutMs: 12_000 });
    expect(s.wave!.waitingCompletion).toHaveLength(1);
    expect(s.message).not.toContain('still not removed');
    await handle.terminate('test done');
  });
});

describe('a drain blocked by a PDB, seen from the Temporal Web UI', () => {
  const f = new DrainFixture('it-blockedui');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('is one pending activity whose summary names the PDB, retrying inside it, while the history stands still', async () => {
    await f.deploy('web', 2);
    await f.waitRunning(2);
    await f.pdb('web', 2);
    const handle = await f.startDrain();
    await waitFor('the drain blocked by the PDB', async () => ((await handle.query(drainStatusQuery)).wave?.blocked.length ?? 0) > 0);
    await sleep(3000);
    const before = (await handle.fetchHistory()).events!.length;
    const refusalsBefore = evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 429).length;
    await sleep(25_000);
    const history = (await handle.fetchHistory()).events!;
    // Before the fix every retry was an activity and a workflow task: ~7 events each, ~8 retries here.
    expect(history.length - before).toBeLessThanOrEqual(4);
    // ... yet the evictions were retried all along.
    expect(evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 429).length - refusalsBefore).toBeGreaterThanOrEqual(3);

    const desc = await handle.describe();
    const pending = desc.raw.pendingActivities ?? [];
    expect(pending.map((a) => a.activityType?.name)).toEqual(['waitForWave']);
    const summaries = history
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'waitForWave')
      .map((e) => JSON.parse(Buffer.from(e.userMetadata?.summary?.data ?? []).toString()) as string);
    expect(summaries.at(-1)).toBe('blocked by PDB web: retrying eviction of 2 pods (wave 0)');
    // The workflow's details (what the Web UI shows of the workflow itself) name the PDB and the pods.
    const meta = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(meta.currentDetails).toMatch(/\*\*blocked\*\* \(2\) by PDB `web`: /);
    await handle.terminate('test done');
  });
});

describe('a Skip DrainRule with no selector at all', () => {
  const f = new DrainFixture('it-skipall');
  const rule = uniqueName('it-skip-all');
  beforeAll(() => f.setup());
  afterAll(async () => {
    await deleteDrainRule(f.c, rule);
    await f.teardown();
  });

  test('is not a silent no-op: the drain says how many pods it skipped and by which rule', async () => {
    await f.deploy('web', 2);
    await f.waitRunning(2);
    await createDrainRule(f.c, rule, { drain: { behavior: 'Skip' } }); // every pod in the cluster
    try {
      const result = await (await f.startDrain()).result();
      expect(result.status.evicted).toBe(0);
      const [first, ...stayed] = result.status.message.split('\n');
      expect(first).toBe(`Drain completed: 0 Pods evicted; 2 Pods skipped (2 by DrainRule ${rule})`);
      // #24.2: and which pods stayed, by that rule.
      expect(stayed).toEqual([expect.stringMatching(new RegExp(`^\\* Pods ${f.ns}/web-\\S+, ${f.ns}/web-\\S+: skipped \\(DrainRule ${rule}\\), left on the node$`))]);
    } finally {
      await deleteDrainRule(f.c, rule);
    }
  });
});

describe('a read the drain cannot make (here refused by RBAC)', () => {
  const f = new DrainFixture('it-readfail');
  const rbac = () => f.c.config.makeApiClient(RbacAuthorizationV1Api);
  const made: string[] = [];
  beforeAll(async () => {
    await f.setup({ worker: false });
    await f.deploy('web', 1);
    await f.waitRunning(1);
  });
  afterAll(async () => {
    for (const name of made) {
      await rbac().deleteClusterRoleBinding({ name }).catch(() => undefined);
      await rbac().deleteClusterRole({ name }).catch(() => undefined);
    }
    await f.teardown();
  });

  // What the drain's read of a node needs (no DaemonSet pods, no namespaceSelector: nothing more).
  const READS: Array<{ what: string; rule: V1PolicyRule; says: string }> = [
    { what: 'the node', rule: { apiGroups: [''], resources: ['nodes'], verbs: ['get'] }, says: 'cannot get resource "nodes"' },
    { what: 'its pods', rule: { apiGroups: [''], resources: ['pods'], verbs: ['list'] }, says: 'cannot list resource "pods"' },
    { what: 'the DrainRules', rule: { apiGroups: ['slipway.dev'], resources: ['drainrules'], verbs: ['list'] }, says: 'cannot list resource "drainrules"' },
  ];

  /** The drain's classify activity as a service account granted exactly `rules`. */
  async function classifierAs(sa: string, rules: V1PolicyRule[]) {
    const name = `${f.ns}-${sa}`;
    made.push(name);
    await f.c.core.createNamespacedServiceAccount({ namespace: f.ns, body: { metadata: { name: sa } } });
    await rbac().createClusterRole({ body: { metadata: { name }, rules } });
    await rbac().createClusterRoleBinding({
      body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'ServiceAccount', name: sa, namespace: f.ns }] },
    });
    const token = await f.c.core.createNamespacedServiceAccountToken({ name: sa, namespace: f.ns, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const { classifyPods } = createSnapshotActivities(kubeFrom(kubeConfigWithToken(token.status!.token!)));
    return () => classifyPods({ nodeName: f.node });
  }

  test('with every read allowed, the snapshot holds the pod (the identity works)', async () => {
    const classify = await classifierAs('all', READS.map((r) => r.rule));
    const snap = await waitFor('a snapshot', () => classify(), { timeoutMs: 20_000 });
    expect(snap.pods.map((p) => p.name)).toEqual([expect.stringMatching(/^web-/)]);
  });

  test.each(READS.map((r, i) => [r.what, r, i] as const))('when %s cannot be read, the read throws the refusal: never an empty list of pods', async (_what, r, i) => {
    const classify = await classifierAs(`no-${i}`, READS.filter((x) => x !== r).map((x) => x.rule));
    const snapshots: string[] = [];
    // Until the binding is in force another read may be refused first: wait for this one's refusal.
    const refusal = await waitFor(`the refusal naming ${r.what}`, async () => {
      const e = await classify().then((s) => void snapshots.push(`${s.pods.length} pods, node exists: ${s.node.exists}`), (x: unknown) => x);
      if (apiStatus(e) !== 403) throw e ?? new Error('a snapshot, not a refusal');
      const status = JSON.parse(String((e as { body?: unknown }).body)) as { message?: string };
      return status.message?.includes(r.says) && status.message;
    }, { timeoutMs: 20_000 });
    expect(refusal).toContain('is forbidden');
    expect(snapshots).toEqual([]);
  });
});
