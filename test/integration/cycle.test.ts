// Node cycling through the kwok provider, on the local stack: surge-first replacement, PDBs kept,
// healing on failure, the Wait method, and invalid requests.
import { createServer, type Server } from 'node:http';
import { DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { nodeCycleWorkflowId } from '../../workflows/cycle/types.js';
import { cycleStatusQuery } from '../../workflows/messages.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { byControlPlane, deleteGroupNodes, readAudit } from '../support/cluster.js';
import { CycleFixture } from '../support/cycle.js';
import { evictionsOf } from '../support/drain.js';
import { waitFor } from '../support/wait.js';
import { CA_ANNOTATION_OWNER, CYCLED_BY } from '../../api/cycle-node-request.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const groupNodes = async (f: CycleFixture) => (await f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${f.group}` })).items;

describe('cycling a 6-node group at concurrency 2', () => {
  const f = new CycleFixture('it-cycle');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('replaces every old node, keeps the app at or above its PDB throughout, and removes each old node exactly once', async () => {
    const old = await ensureFakeNodeGroup(f.c.core, f.group, 6);
    await f.app(6, 5);
    await waitFor('6 app pods Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => p.status?.phase === 'Running').length === 6);
    await f.watchApp();
    await f.watchDetached();
    const startedAt = new Date();
    const handle = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 2 } });
    const result = await handle.result();
    // The phases, in order, from the history's search-attribute upserts (what the Web UI lists by).
    const phases = (await handle.fetchHistory()).events!
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.SlipwayPhase?.data)
      .filter((d): d is Uint8Array => Boolean(d))
      .map((d) => JSON.parse(Buffer.from(d).toString()) as string);

    expect(result.phase).toBe('Successful');
    expect(result.nodesCycled).toBe(6);
    expect(result.nodes.map((n) => n.phase)).toEqual(Array(6).fill('Successful'));
    expect(phases[0]).toBe('Pending');
    // Batches, each through the same phases (the next starts while the last drains), then Successful.
    const batch = ['Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination'];
    const rest = phases.filter((p) => p !== 'Pending');
    expect(rest.at(-1)).toBe('Successful');
    const cycles = rest.slice(0, -1);
    expect(cycles.length % 4).toBe(0);
    expect(cycles.length / 4).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < cycles.length; i += 4) expect(cycles.slice(i, i + 4)).toEqual(batch);
    const now = await groupNodes(f);
    expect(now.map((n) => n.metadata!.name).filter((n) => old.includes(n!))).toEqual([]);
    expect(now).toHaveLength(6);
    for (const n of now) {
      expect(n.spec?.unschedulable).toBeFalsy();
      expect(n.metadata?.annotations?.[CA_ANNOTATION_OWNER]).toBeUndefined(); // scale-down protection released
    }
    expect(f.minAvailable).toBeGreaterThanOrEqual(5);
    // Concurrency 2: two nodes in flight at once, never more.
    expect(f.maxDetached).toBe(2);
    const deletions = (await readAudit()).filter(
      (e) => e.objectRef?.resource === 'nodes' && e.verb === 'delete' && e.responseStatus?.code === 200 && new Date(e.requestReceivedTimestamp) >= startedAt && old.includes(e.objectRef.name!),
    );
    const perNode = new Map<string, number>();
    for (const d of deletions) perNode.set(d.objectRef!.name!, (perNode.get(d.objectRef!.name!) ?? 0) + 1);
    expect([...perNode.keys()].sort()).toEqual([...old].sort());
    expect([...perNode.values()].every((n) => n === 1)).toBe(true);
  }, 240_000);
});

describe('a failing health check', () => {
  const f = new CycleFixture('it-cycle-heal');
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.statusCode = 503;
      res.end('not ready');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
    await f.setup();
  });
  afterAll(async () => {
    server.close();
    await f.teardown();
  });

  test('fails the request, and healing leaves every node in its group and schedulable', async () => {
    const old = await ensureFakeNodeGroup(f.c.core, f.group, 4);
    const handle = await f.start({
      selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } },
      cycleSettings: { concurrency: 2 },
      skipInitialHealthChecks: true,
      healthChecks: [{ endpoint: `http://127.0.0.1:${port}/healthz?node={{ .NodeIP }}`, waitPeriod: '3s' }],
    });
    await expect(handle.result()).rejects.toThrow();
    const s = await handle.query(cycleStatusQuery);
    expect(s.phase).toBe('Failed');
    expect(s.message).toContain('did not pass their health checks');
    expect(s.message).toContain('status 503');
    const nodes = await groupNodes(f);
    for (const name of old) {
      const n = nodes.find((x) => x.metadata!.name === name);
      expect(n).toBeDefined(); // back in its group
      expect(n!.spec?.unschedulable).toBeFalsy();
      expect(n!.metadata?.annotations?.[DETACHED_FROM_GROUP]).toBeUndefined();
      expect(n!.metadata?.annotations?.[CYCLED_BY]).toBeUndefined();
    }
    expect(nodes.filter((n) => n.metadata?.annotations?.[CA_ANNOTATION_OWNER])).toEqual([]);
  }, 120_000);
});

describe('the Wait method', () => {
  const f = new CycleFixture('it-cycle-wait');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('waits for a do-not-disrupt pod to finish before draining, and never evicts it', async () => {
    await ensureFakeNodeGroup(f.c.core, f.group, 1);
    const batch = f.c.config.makeApiClient((await import('@kubernetes/client-node')).BatchV1Api);
    await batch.createNamespacedJob({
      namespace: f.ns,
      body: {
        metadata: { name: 'report' },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { labels: { app: 'report' }, annotations: { 'slipway.dev/do-not-disrupt': 'true', 'pod-complete.stage.kwok.x-k8s.io/delay': '6s' } },
            spec: { restartPolicy: 'Never', nodeSelector: { [NODE_GROUP_LABEL]: f.group }, containers: [{ name: 'c', image: 'registry.invalid/job:1' }] },
          },
        },
      },
    });
    const pod = await waitFor('the job pod Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns, labelSelector: 'app=report' })).items.find((p) => p.status?.phase === 'Running'));
    const handle = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { method: 'Wait' } });
    await waitFor('WaitingPods', async () => (await handle.query(cycleStatusQuery)).nodes[0]?.phase === 'WaitingPods');
    const result = await handle.result();
    expect(result.phase).toBe('Successful');
    const audit = await readAudit();
    expect(evictionsOf(audit).map((e) => e.objectRef!.name)).not.toContain(pod.metadata!.name);
    const nodeDeleted = audit.find((e) => e.objectRef?.resource === 'nodes' && e.verb === 'delete' && e.objectRef.name === pod.spec!.nodeName)!;
    // The node went only after the pod had run its 6 s.
    expect(new Date(nodeDeleted.requestReceivedTimestamp).getTime() - new Date(pod.status!.startTime!).getTime()).toBeGreaterThanOrEqual(5000);
  }, 120_000);
});

describe('an invalid request', () => {
  const f = new CycleFixture('it-cycle-bad');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('an unknown node group fails with a clear message and touches nothing', async () => {
    const names = await ensureFakeNodeGroup(f.c.core, f.group, 2);
    const handle = await f.start({ nodeGroupName: `${f.group}-nope`, selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } });
    await expect(handle.result()).rejects.toThrow();
    const s = await handle.query(cycleStatusQuery);
    expect(s.phase).toBe('Failed');
    expect(s.message).toContain(`unknown node group ${f.group}-nope`);
    const nodes = await groupNodes(f);
    expect(nodes.map((n) => n.metadata!.name).sort()).toEqual(names);
    for (const n of nodes) {
      expect(n.spec?.unschedulable).toBeFalsy();
      expect(Object.keys(n.metadata?.annotations ?? {}).filter((k) => k.startsWith('slipway.dev/'))).toEqual([]);
    }
  });

  test('a selector that picks nodes of another group fails within 30 s, naming them, and touches no node', async () => {
    const other = `${f.group}-b`;
    const mine = await ensureFakeNodeGroup(f.c.core, f.group, 2);
    const theirs = await ensureFakeNodeGroup(f.c.core, other, 7);
    const since = new Date();
    const handle = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: other } } }, 'other-group');
    try {
      // Before the check, the request sat in Pending for 5 minutes (then failed about instances without nodes).
      const outcome = await Promise.race([handle.result().then(() => 'completed', (err: unknown) => err), sleep(30_000).then(() => 'still running after 30 s')]);
      expect(outcome).toBeInstanceOf(WorkflowFailedError);
      expect(((outcome as WorkflowFailedError).cause as ApplicationFailure).type).toBe('InvalidCycleRequest');
      const s = await handle.query(cycleStatusQuery);
      expect(s.phase).toBe('Failed');
      const named = theirs.slice(0, 5).map((n) => `${n} (node group ${other})`).join(', ');
      expect(s.message).toBe(`selector ${NODE_GROUP_LABEL}=${other} picks 7 nodes outside node group ${f.group}: ${named} and 2 more`);
      // Nothing touched: no node of either group patched, updated or deleted, none cordoned or marked.
      const writes = (await readAudit()).filter(
        (e) => e.objectRef?.resource === 'nodes' && !e.objectRef.subresource && !byControlPlane(e) && [...mine, ...theirs].includes(e.objectRef.name!) && new Date(e.requestReceivedTimestamp) >= since,
      );
      expect(writes.map((e) => `${e.verb} ${e.objectRef!.name}`)).toEqual([]);
      const nodes = (await f.c.core.listNode()).items.filter((n) => [...mine, ...theirs].includes(n.metadata!.name!));
      expect(nodes).toHaveLength(9);
      for (const n of nodes) {
        expect(n.spec?.unschedulable).toBeFalsy();
        expect(Object.keys(n.metadata?.annotations ?? {}).filter((k) => k.startsWith('slipway.dev/'))).toEqual([]);
      }
    } finally {
      await handle.terminate().catch(() => undefined);
      await deleteGroupNodes(f.c, other);
    }
  }, 90_000);

  // Admission refuses both now; a request stored before that, or a workflow started directly, must
  // still fail at once: before, 0s detached a node and evicted a pod before failing (leaving a surge
  // node), and 99999999999h failed the node's workflow task with RangeError every 10 s, for ever.
  test.each([['0s', '"0s" must be a duration between 1m and 168h'], ['99999999999h', '"99999999999h" is not a duration']])(
    'cyclingTimeout %s fails the request with InvalidCycleRequest before any node is touched',
    async (cyclingTimeout, says) => {
      const names = await ensureFakeNodeGroup(f.c.core, f.group, 2);
      const since = new Date();
      const handle = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { cyclingTimeout } }, `timeout-${cyclingTimeout.length}`);
      const outcome = await Promise.race([handle.result().then(() => 'completed', (err: unknown) => err), sleep(30_000).then(() => 'still running after 30 s')]);
      expect(outcome).toBeInstanceOf(WorkflowFailedError);
      expect(((outcome as WorkflowFailedError).cause as ApplicationFailure).type).toBe('InvalidCycleRequest');
      const s = await handle.query(cycleStatusQuery);
      expect(s.phase).toBe('Failed');
      expect(s.message).toContain(`spec.cycleSettings.cyclingTimeout: ${says}`);
      const writes = (await readAudit()).filter(
        (e) => e.objectRef?.resource === 'nodes' && !byControlPlane(e) && names.includes(e.objectRef.name!) && e.verb !== 'get' && e.verb !== 'list' && e.verb !== 'watch' && new Date(e.requestReceivedTimestamp) >= since,
      );
      expect(writes.map((e) => `${e.verb} ${e.objectRef!.name}`)).toEqual([]);
      expect((await groupNodes(f)).map((n) => n.metadata!.name).sort()).toEqual(names);
      for (const n of names) {
        // No node cycle started.
        await expect(f.client.workflow.getHandle(nodeCycleWorkflowId(handle.workflowId, n)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
      }
    },
    60_000,
  );

  test('an empty selector is refused before anything is read', async () => {
    const handle = await f.start({ selector: {} });
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.query(cycleStatusQuery)).message).toContain('selector must not be empty: it would match every node');
  });
});

describe('two requests on one node group', () => {
  const f = new CycleFixture('it-cycle-lock');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('the second waits, says why, and starts only when the first is done, on the nodes as they are then', async () => {
    const old = await ensureFakeNodeGroup(f.c.core, f.group, 3);
    const spec = { selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 1 } };
    const first = await f.start(spec, 'first');
    await waitFor('the first request holds the node group', async () => (await first.query(cycleStatusQuery)).phase !== 'Pending');
    const second = await f.start(spec, 'second');
    await waitFor('the second request waits for the node group', async () => {
      const s = await second.query(cycleStatusQuery);
      return s.phase === 'Pending' && s.message.includes(`waiting for node group ${f.group}: another request is cycling it (lock lock/kwok/${f.group})`);
    });
    const a = await first.result();
    const b = await second.result();
    expect(a.phase).toBe('Successful');
    expect(b.phase).toBe('Successful');
    expect(a.nodes.map((n) => n.nodeName).sort()).toEqual(old);
    // The second picked its nodes after the first was done: the first one's replacements.
    expect(b.nodes).toHaveLength(3);
    for (const n of b.nodes) expect(old).not.toContain(n.nodeName);
    // It touched the group only after the first had finished.
    const firstClosed = (await first.describe()).closeTime!.getTime();
    const secondDetach = (await second.fetchHistory()).events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'detachNodes')!;
    expect(Number(secondDetach.eventTime!.seconds) * 1000).toBeGreaterThanOrEqual(Math.floor(firstClosed / 1000) * 1000);
    // Both released the lock.
    const lock = await f.client.workflow.getHandle(`lock/kwok/${f.group}`).describe();
    expect(lock.status.name).not.toBe('RUNNING');
  }, 180_000);
});
