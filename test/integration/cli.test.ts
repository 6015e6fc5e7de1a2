// The compiled CLI, run as a user runs it (a child process), against the local stack: it does what
// it is told or says in one line why not, with exit 0 (done), 1 (failed or refused) or 2 (bad
// command line); it finds drains from what a user has in hand; a drain that leaves pods is no success.
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { HELD_BY_ANNOTATION } from '../../api/node-maintenance.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { cycleWorkflowId } from '../../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow, drainWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery, drainStatusQuery } from '../../workflows/messages.js';
import { NodesAttr } from '../../workflows/search-attributes.js';
import { uniqueName } from '../support/cluster.js';
import { CycleFixture, deployApp } from '../support/cycle.js';
import { DrainFixture } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { cli, expectOneLineError, expectUsageError, lines } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { parse as parseYaml } from 'yaml';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const nowhere = { TEMPORAL_ADDRESS: '127.0.0.1:1', KUBECONFIG: '/nonexistent/slipway-kubeconfig' };

describe('without any server', () => {
  test.each([[['--help']], [['help']], [['drain', '--help']], [['help', 'cycle']], [['cycle', 'workers', '-h']]])('%j prints usage and exits 0', async (args) => {
    const r = await cli(args, nowhere);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage:\n {2}slipway /);
    expect(r.stderr).toBe('');
  });

});

describe('drains from the CLI', () => {
  const f = new DrainFixture('it-cli');
  const env = () => ({ SLIPWAY_TASK_QUEUE: f.taskQueue });
  const handles: WorkflowHandle[] = [];
  beforeAll(async () => {
    await f.setup();
    await f.deploy('web', 1);
    await f.waitRunning(1);
    await f.addSpare();
  });
  afterAll(async () => {
    for (const h of handles) await h.terminate().catch(() => undefined);
    await f.teardown();
  });

  const bare = async (name: string, labels: Record<string, string> = {}): Promise<V1Pod> =>
    f.c.core.createNamespacedPod({
      namespace: f.ns,
      body: {
        metadata: { name, labels },
        // Bound to the node directly: the cordon does not keep it off (as with a pod that returns).
        spec: { nodeName: f.node, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
      },
    });

  test('a node that does not exist is an error, and no drain starts', async () => {
    const ghost = `${f.group}-ghost`;
    expectOneLineError(await cli(['drain', ghost], env()), `node ${ghost} not found`);
    await expect(f.client.workflow.getHandle(`drain/${ghost}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  test('NM-7.7 a node a NodeMaintenance holds is refused, naming the maintenance, and no drain starts', async () => {
    const patch = (v: string | null) => f.c.core.patchNode({ name: f.node, body: { metadata: { annotations: { [HELD_BY_ANNOTATION]: v } } } }, mergePatch);
    await patch('kernel-upgrade');
    try {
      expectOneLineError(await cli(['drain', f.node], env()), `node ${f.node} is held by NodeMaintenance kernel-upgrade; steer it through the maintenance`);
      await expect(f.client.workflow.getHandle(`drain/${f.node}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    } finally {
      await patch(null);
    }
  });

  test('`drain --node X` drains no node named --node', async () => {
    const before = new Date();
    expectUsageError(await cli(['drain', '--node', f.node], env()), 'unknown option --node');
    // (The shared server may keep one from a run of an older CLI: none may have started now.)
    const d = await f.client.workflow.getHandle('drain/--node').describe().catch((err: unknown) => {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    });
    expect(d === undefined || d.startTime < before).toBe(true);
  });

  test('drains the node, exits 0, and the drain is found by its node in the Web UI (search attributes)', async () => {
    const r = await cli(['drain', f.node], env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`started drain/${f.node}`);
    expect(lines(r.stdout).at(-1)).toMatch(new RegExp(`^drain/${f.node} finished at .*: Drain completed: 1 Pod evicted$`));
    const d = await f.client.workflow.getHandle(`drain/${f.node}`).describe();
    expect(d.typedSearchAttributes.get(NodesAttr)).toEqual([f.node]);
    const found = await waitFor('the drain listed by SlipwayNodes', async () => {
      const ids: string[] = [];
      for await (const w of f.client.workflow.list({ query: `SlipwayNodes = '${f.node}'` })) ids.push(w.workflowId);
      return ids.length > 0 && ids;
    }, { timeoutMs: 15_000 });
    expect(found).toEqual([`drain/${f.node}`]);
  });

  test('a second drain of a drained node is refused until --again, which starts a new run', async () => {
    const before = await f.client.workflow.getHandle(`drain/${f.node}`).describe();
    const r = await cli(['drain', f.node, '--no-follow'], env());
    expectOneLineError(r, `drain/${f.node} finished at ${before.closeTime!.toISOString()}`, 'Drain completed: 1 Pod evicted', '--again');
    expect((await f.client.workflow.getHandle(`drain/${f.node}`).describe()).runId).toBe(before.runId);

    const again = await cli(['drain', f.node, '--again'], env());
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Drain completed: 0 Pods evicted');
    expect((await f.client.workflow.getHandle(`drain/${f.node}`).describe()).runId).not.toBe(before.runId);
  });

  test('status and follow accept the node name and the drain ID; a finished drain that left a pod exits 1 naming it', async () => {
    const status = await cli(['status', f.node], env());
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^drain/${f.node} finished at .*: Drain completed: 0 Pods evicted\\n$`));

    await bare('returner');
    await waitFor('the bound pod Running', async () => (await f.c.core.readNamespacedPod({ name: 'returner', namespace: f.ns })).status?.phase === 'Running');
    for (const ref of [f.node, `drain/${f.node}`]) {
      const r = await cli(['follow', ref], env());
      expectOneLineError(r, `1 Pod is still on node ${f.node}: ${f.ns}/returner`);
    }
  });

  test('a blocked drain: status names the PDB, signals reach it by node name, and a failed drain exits 1 naming the pods', async () => {
    await bare('db-0', { app: 'db' });
    await f.pdb('db', 1);
    // The Fail policy ends the drain once the PDB has refused for 20 s.
    const handle = await f.client.workflow.start(drainWorkflow, {
      taskQueue: f.taskQueue,
      workflowId: `drain/${f.node}`,
      args: [{ nodeName: f.node, options: { podEvictionTimeout: { after: '20s', policy: 'Fail' } } }],
    });
    handles.push(handle);
    await waitFor('the drain to report the PDB', async () => (await handle.query(drainStatusQuery)).wave?.blocked.some((b) => b.pdbs.includes('db')));

    const status = await cli(['status', f.node], env());
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`drain/${f.node} (Web UI: `);
    expect(status.stdout).toContain(`Draining: Drain not completed yet`);
    expect(status.stdout).toContain('The disruption budget db needs 1 healthy pods');

    // #25.1 -o json: one document, the drain's own status in it.
    const json = await cli(['status', '-o', 'json', f.node], env());
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toMatchObject({ apiVersion: 'cli.slipway.dev/v1', kind: 'Status', target: 'drain', workflowId: `drain/${f.node}`, state: 'running', status: { phase: 'Draining' } });

    const retry = await cli(['retry-now', f.node], env());
    expect({ code: retry.code, stdout: retry.stdout.trim() }).toEqual({ code: 0, stdout: `sent retry-now to drain/${f.node}` });
    expectOneLineError(await cli(['skip-pod', f.node, `${f.ns}/nope`], env()), `pod ${f.ns}/nope not found`);

    const follow = await cli(['follow', `drain/${f.node}`], env());
    expectOneLineError(follow, `drain/${f.node} failed at`, 'podEvictionTimeout', `still on node ${f.node}`, `${f.ns}/db-0`);

    // Signals to a finished drain: said so, in one line.
    expectOneLineError(await cli(['retry-now', `drain/${f.node}`], env()), `nothing to retry-now: drain/${f.node} failed at`);
  });

  test('a malformed --selector is refused, not retried forever by the inventory workflow', async () => {
    expectUsageError(await cli(['inventory', '--selector', 'bad key!=x'], env(), 30_000), 'invalid --selector "bad key!=x"');
    const ok = await cli(['inventory', '--selector', `${NODE_GROUP_LABEL}=${f.group}`], env());
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`${f.group}\\s+2\\s+2\\s+1`));
  });

  test('#25.1 inventory -o json|yaml: one document of the groups', async () => {
    const selector = `${NODE_GROUP_LABEL}=${f.group}`;
    const json = await cli(['inventory', '--selector', selector, '-o', 'json'], env());
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ apiVersion: 'cli.slipway.dev/v1', kind: 'Inventory', selector, groups: { [f.group]: { total: 2, ready: 2, cordoned: 1 } } });
    const yaml = await cli(['-o', 'yaml', 'inventory', '--selector', selector], env());
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout));
  });

  test('a missing workflow and a missing request are named, in one line', async () => {
    expectOneLineError(await cli(['status', `drain/${f.group}-nothing`], env()), `no workflow drain/${f.group}-nothing`);
    expectOneLineError(await cli(['follow', `${f.ns}/nothing`], env()), `CycleNodeRequest ${f.ns}/nothing not found`);
    expectOneLineError(await cli(['status', `${f.group}-nothing`], env()), `no drain of node ${f.group}-nothing found`);
  });
});

describe('a CLI drain of a node whose pods keep coming back', () => {
  const f = new DrainFixture('it-cli-sticky');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('ends instead of chasing them, exit 1, naming the pod left on the node and why', async () => {
    await f.stickyDeployment('sticky');
    await f.waitRunning(1);
    const r = await cli(['drain', f.node], { SLIPWAY_TASK_QUEUE: f.taskQueue });
    const left = (await f.pods('app=sticky')).filter((p) => p.spec?.nodeName === f.node && !p.metadata?.deletionTimestamp).map((p) => `${f.ns}/${p.metadata!.name}`);
    expect(left).toHaveLength(1);
    expectOneLineError(r, `* Pod ${left[0]}: returns after eviction: tolerates node.kubernetes.io/unschedulable`, `but 1 Pod is still on node ${f.node}: ${left[0]}`);
  }, 120_000);
});

describe('cycle requests from the CLI', () => {
  const f = new CycleFixture('it-cli-cycle');
  const env = () => ({ SLIPWAY_TASK_QUEUE: f.taskQueue });
  const objects = () => f.c.config.makeApiClient(CustomObjectsApi);
  const crd = { group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural };
  const read = (namespace: string, name: string) => objects().getNamespacedCustomObject({ ...crd, namespace, name }).then(() => true, () => false);
  let handle: WorkflowHandle<typeof cycleNodeRequestWorkflow> | undefined;
  let skipped: { pod: string; node: string } | undefined;
  beforeAll(() => f.setup());
  afterAll(async () => {
    await handle?.terminate().catch(() => undefined);
    for (const ns of ['default', f.ns]) {
      for (const name of ['cli-missing-ns', 'cli-here']) await objects().deleteNamespacedCustomObject({ ...crd, namespace: ns, name: `${name}-${f.group}` }).catch(() => undefined);
    }
    await f.teardown();
  });

  test('-n with a namespace that does not exist: an error, and nothing is created anywhere', async () => {
    const name = `cli-missing-ns-${f.group}`;
    const missing = uniqueName('it-cli-nons');
    const r = await cli(['cycle', f.group, '-n', missing, '--name', name, '--no-follow'], env());
    expectOneLineError(r, `namespace ${missing} not found`);
    expect(await read('default', name)).toBe(false);
  });

  test('-n puts the request in that namespace', async () => {
    const name = `cli-here-${f.group}`;
    await ensureFakeNodeGroup(f.c.core, f.group, 1); // the CLI refuses a group with no node
    const r = await cli(['cycle', f.group, '-n', f.ns, '--name', name, '--no-follow'], env());
    expect(r.stderr).toBe('');
    expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({ code: 0, stdout: `created cyclenoderequest ${f.ns}/${name}` });
    expect(await read(f.ns, name)).toBe(true);
    expect(await read('default', name)).toBe(false);
    await objects().deleteNamespacedCustomObject({ ...crd, namespace: f.ns, name });
  });

  test('a request blocked on a PDB: status by request, by workflow ID and by node shows the drain, its ID and the blocker; signals find it through the pod', async () => {
    const [node] = await ensureFakeNodeGroup(f.c.core, f.group, 1);
    await deployApp(f.c, f.ns, f.group, 2, { minAvailable: 2 });
    await waitFor('2 app pods Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => p.status?.phase === 'Running').length === 2);
    // The object as the bridge would see it, and its workflow as the bridge would start it.
    const name = 'blocked';
    const spec = { nodeGroupName: f.group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { method: 'Drain' } };
    const obj = (await objects().createNamespacedCustomObject({
      ...crd,
      namespace: f.ns,
      body: { apiVersion: `${crd.group}/${crd.version}`, kind: CYCLE_NODE_REQUEST.kind, metadata: { name }, spec },
    })) as { metadata: { uid: string } };
    const request = { namespace: f.ns, name, uid: obj.metadata.uid };
    const id = cycleWorkflowId(request);
    handle = await f.client.workflow.start(cycleNodeRequestWorkflow, { taskQueue: f.taskQueue, workflowId: id, args: [{ request, spec: spec as never }] });
    const drainId = `${id}/node/${node}/drain`;
    await waitFor('the cycle to report the PDB block', async () => {
      const s = await handle!.query(cycleStatusQuery);
      return s.nodes.some((n) => n.phase === 'DrainingPods' && n.drainMessage?.includes('disruption budget app'));
    }, { timeoutMs: 90_000 });

    for (const ref of [`${f.ns}/${name}`, `cnr/${f.ns}/${name}`, id]) {
      const r = await cli(['status', ref], env());
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`${id} (running; Web UI: `);
      expect(r.stdout).toMatch(new RegExp(`${node}\\s+DrainingPods`));
      expect(r.stdout).toContain(`drain ${drainId}`);
      expect(r.stdout).toContain('disruption budget app');
    }

    // #25.1 -o yaml / -o json: one document each, the cycle's status in it; -n with cnr/<name>.
    const doc = await cli(['status', `cnr/${name}`, '-n', f.ns, '-o', 'yaml'], env());
    expect({ code: doc.code, stderr: doc.stderr }).toEqual({ code: 0, stderr: '' });
    const d = parseYaml(doc.stdout) as { kind: string; target: string; workflowId: string; state: string; status: { nodes: { nodeName: string; phase: string }[] } };
    expect(d).toMatchObject({ apiVersion: 'cli.slipway.dev/v1', kind: 'Status', target: 'request', workflowId: id, state: 'running' });
    expect(d.status.nodes).toContainEqual(expect.objectContaining({ nodeName: node, phase: 'DrainingPods' }));
    const dry = await cli(['cycle', f.group, '-n', f.ns, '--dry-run', '--concurrency', '1', '-o', 'json'], env());
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: '' });
    const plan = JSON.parse(dry.stdout) as { nodes: string[]; batches: string[][] };
    expect(plan).toMatchObject({ apiVersion: 'cli.slipway.dev/v1', kind: 'CycleDryRun', request: { namespace: f.ns }, nodeGroups: [f.group], method: 'Drain', concurrency: 1, missingNodes: [] });
    // The group's nodes now (the cycle may have added a replacement), one per batch at concurrency 1.
    expect(plan.nodes.length).toBeGreaterThan(0);
    for (const n of plan.nodes) expect(n.startsWith(`${f.group}-`)).toBe(true);
    expect(plan.batches).toEqual(plan.nodes.map((n) => [n]));

    const byNode = await cli(['status', node!], env());
    expect(byNode.code).toBe(0);
    expect(byNode.stdout).toContain(`${drainId} (Web UI: `);
    expect(byNode.stdout).toContain('The disruption budget app needs 2 healthy pods');

    // `drain` of a node a cycle is draining attaches to that drain instead of starting a second one.
    const drain = await cli(['drain', node!, '--no-follow'], env());
    expect({ code: drain.code, stderr: drain.stderr }).toEqual({ code: 0, stderr: '' });
    expect(drain.stdout).toContain(`${drainId} is already draining ${node}`);
    await expect(f.client.workflow.getHandle(`drain/${node}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    const retry = await cli(['retry-now', `${f.ns}/${name}`], env());
    expectOneLineError(retry, `${id} is a request: say which node with --node (draining now: ${node})`);
    const pod = (await f.c.core.listNamespacedPod({ namespace: f.ns, labelSelector: 'app=app' })).items[0]!.metadata!.name!;
    const skip = await cli(['skip-pod', `${f.ns}/${name}`, `${f.ns}/${pod}`, '--reason', 'cli test'], env());
    expect({ code: skip.code, stdout: skip.stdout.trim(), stderr: skip.stderr }).toEqual({ code: 0, stdout: `sent skip-pod ${f.ns}/${pod} to ${drainId}`, stderr: '' });
    await waitFor('the skip recorded in the drain', async () => {
      const s = await f.client.workflow.getHandle(drainId).query(drainStatusQuery);
      return s.forced.some((x) => x.pod === `${f.ns}/${pod}` && x.action === 'Skip');
    });
    skipped = { pod: `${f.ns}/${pod}`, node: node! };
  }, 180_000);

  test('#24.9 (sibling) the skip on a cycle\'s drain is recorded on the CycleNodeRequest: a Warning Event naming pod, node, sender and reason', async () => {
    expect(skipped).toBeDefined();
    const event = await waitFor('PodSkipped on the CycleNodeRequest', async () => {
      const list = await f.c.core.listNamespacedEvent({ namespace: f.ns, fieldSelector: `involvedObject.kind=CycleNodeRequest,involvedObject.name=blocked` });
      return list.items.find((e) => e.reason === 'PodSkipped');
    }, { timeoutMs: 30_000 });
    expect(event.type).toBe('Warning');
    expect(event.message).toMatch(new RegExp(`^Pod ${skipped!.pod} on node ${skipped!.node} skipped by skipPod from \\S+: cli test$`));
  }, 60_000);
});

describe("a NodeMaintenance's drain blocked by PDBs, from the CLI", () => {
  const f = new MaintenanceFixture('it-cli-nm');
  const env = () => ({ SLIPWAY_TASK_QUEUE: f.taskQueue, SLIPWAY_IDENTITY: 'alice@console' });
  const name = () => `${f.group}-m`;
  let node: string;
  let pods: Record<string, string>;
  let handle: WorkflowHandle;
  beforeAll(async () => {
    await f.setup(1);
    node = f.nodes[0]!;
    for (const app of ['db', 'web']) await f.pod(app, node, 0);
    const running = await f.waitApps(['db', 'web']);
    pods = Object.fromEntries(running.map((p) => [p.metadata!.labels!.app!, `${f.ns}/${p.metadata!.name!}`]));
    for (const app of ['db', 'web']) await f.blockingPdb(app);
    handle = await f.create(name(), { nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] }, stage: 'Drain' });
    await f.statusWhen(handle, 'both pods blocked', (s) => s.nodeStatuses.some((x) => x.nodeRef.name === node && x.podsBlocked === 2));
  }, 120_000);
  afterAll(() => f.teardown(), 60_000);

  test('#24.7 status <node> and skip-pod <node> find the drain of the maintenance holding the node, and say which it is', async () => {
    const drainId = `nm-node/${node}/drain`;
    const status = await cli(['status', node], env());
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: '' });
    expect(status.stdout).toContain(`${drainId} (Web UI: `);
    expect(status.stdout).toContain('Draining: Drain not completed yet');
    expect(status.stdout).toContain('The disruption budget db needs');

    const skip = await cli(['skip-pod', node, pods.db!, '--reason', 'db is replicated elsewhere'], env());
    expect({ code: skip.code, stdout: skip.stdout.trim(), stderr: skip.stderr }).toEqual({ code: 0, stdout: `sent skip-pod ${pods.db} to ${drainId}`, stderr: '' });
    await waitFor('the skip recorded in the drain', async () => {
      const s = await f.client.workflow.getHandle(drainId).query(drainStatusQuery);
      return s.forced.some((x) => x.pod === pods.db && x.action === 'Skip' && x.requestedBy === 'alice@console');
    });

    const retry = await cli(['retry-now', node], env());
    expect({ code: retry.code, stdout: retry.stdout.trim() }).toEqual({ code: 0, stdout: `sent retry-now to nm-node/${node}` });
  }, 120_000);

  test('#25.1 maintenance <name> plan -o json and status nm/<name> -o json: one document each', async () => {
    const plan = await cli(['maintenance', name(), 'plan', '-o', 'json'], env());
    expect({ code: plan.code, stderr: plan.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(plan.stdout)).toMatchObject({ apiVersion: 'cli.slipway.dev/v1', kind: 'MaintenancePlan', workflowId: expect.stringMatching(new RegExp(`^nm/${name()}/`)), fresh: expect.any(Boolean), plan: { name: name(), stage: 'Drain' } });
    const status = await cli(['-o', 'json', 'status', `nm/${name()}`], env());
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(status.stdout)).toMatchObject({ kind: 'Status', target: 'maintenance', state: 'running', status: { stage: 'Drain' } });
  }, 60_000);

  test('#24.9 a forced pod deletion (and a skip) on a maintenance\'s node is recorded on the NodeMaintenance: a Warning Event and a line in its status', async () => {
    const force = await cli(['force-delete-pod', `nm/${name()}`, pods.web!, '--reason', 'stuck terminating'], env());
    expect({ code: force.code, stdout: force.stdout.trim(), stderr: force.stderr }).toEqual({ code: 0, stdout: `sent force-delete-pod ${pods.web} to nm-node/${node}/drain`, stderr: '' });
    const events = await waitFor('PodForceDeleted on the NodeMaintenance', async () => {
      const list = await f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.kind=NodeMaintenance,involvedObject.name=${name()}` });
      const forced = list.items.filter((e) => e.reason === 'PodForceDeleted' || e.reason === 'PodSkipped');
      return forced.length === 2 && forced;
    }, { timeoutMs: 30_000 });
    const byReason = Object.fromEntries(events.map((e) => [e.reason!, e]));
    expect(byReason.PodForceDeleted).toMatchObject({ type: 'Warning', involvedObject: { kind: 'NodeMaintenance', name: name() } });
    expect(byReason.PodForceDeleted!.message).toBe(`Pod ${pods.web} on node ${node} force-deleted (grace period 0) by forceDeletePod from alice@console: stuck terminating`);
    expect(byReason.PodSkipped!.message).toBe(`Pod ${pods.db} on node ${node} skipped by skipPod from alice@console: db is replicated elsewhere`);
    const s = await f.statusWhen(handle, 'the forced pods in the node status', (x) => x.nodeStatuses.some((n) => n.nodeRef.name === node && n.drainMessage.includes('force-deleted')));
    const line = s.nodeStatuses.find((n) => n.nodeRef.name === node)!.drainMessage;
    expect(line).toContain(`* Pod ${pods.web} on node ${node} force-deleted (grace period 0) by forceDeletePod from alice@console: stuck terminating`);
    expect(line).toContain(`* Pod ${pods.db} on node ${node} skipped by skipPod from alice@console`);
  }, 120_000);
});
