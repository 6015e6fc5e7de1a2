// Bad input touches nothing, and a worker killed mid-wave does not make the drain evict twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { NODE_GROUP_LABEL } from '../../activities/inventory.js';
import { drainStatusQuery, skipPodSignal } from '../../workflows/messages.js';
import { DrainFixture, evictionsOf, mergePatch } from '../support/drain.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

describe('an invalid DrainRule at drain time', () => {
  const f = new DrainFixture('it-badrule');
  const rules = f.c.config.makeApiClient(CustomObjectsApi);
  const name = uniqueName('it-bad-rule');
  beforeAll(() => f.setup());
  afterAll(async () => {
    await rules.deleteClusterCustomObject({ group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules', name }).catch(() => undefined);
    await f.teardown();
  });

  test('fails the drain with a message naming the rule and the problem, before cordoning or evicting anything', async () => {
    // The CRD's CEL checks structure; a label key's syntax is checked at drain time.
    await rules.createClusterCustomObject({
      group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules',
      body: { apiVersion: 'slipway.dev/v1alpha1', kind: 'DrainRule', metadata: { name }, spec: {
        drain: { behavior: 'Skip' },
        nodes: [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } }],
        pods: [{ selector: { matchLabels: { 'a/b/c': 'x' } } }],
      } },
    });
    await f.deploy('web', 1);
    await f.waitRunning(1);
    const handle = await f.startDrain();
    await expect(handle.result()).rejects.toThrow();
    const history = await handle.fetchHistory();
    const failure = history.events!.find((e) => e.workflowExecutionFailedEventAttributes)!.workflowExecutionFailedEventAttributes!.failure!;
    expect(failure.message).toContain(`DrainRule ${name} is invalid`);
    expect(failure.message).toContain('label key "a/b/c" has more than one "/"');
    expect((await f.c.core.readNode({ name: f.node })).spec?.unschedulable).toBeFalsy();
    expect(evictionsOf(await f.audit())).toHaveLength(0);
  });
});

describe('a worker killed mid-wave', () => {
  const f = new DrainFixture('it-kill');
  const workers: ChildProcess[] = [];
  const startWorkerProcess = () => {
    const p = spawn('node', ['dist/worker/main.js'], {
      env: { ...process.env, SLIPWAY_TASK_QUEUE: f.taskQueue },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    workers.push(p);
    return p;
  };
  beforeAll(() => f.setup({ worker: false }));
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await f.teardown();
  });

  test('still finishes, and every pod is evicted exactly once', async () => {
    await f.deploy('web', 30, {}, 2);
    await f.waitRunning(30);
    await f.addSpare();
    const first = startWorkerProcess();
    // Slow evictions (4/s) so the kill lands in the middle of the wave.
    const handle = await f.startDrain({ evictionQPS: 4, evictionConcurrency: 2 });
    await waitFor('a few evictions', async () => evictionsOf(await f.audit()).length >= 6, { intervalMs: 100 });
    first.kill('SIGKILL');
    const atKill = evictionsOf(await f.audit()).length;
    expect(atKill).toBeLessThan(30);
    startWorkerProcess();

    const result = await handle.result();
    expect(result.status.phase).toBe('Drained');
    const perPod = new Map<string, number>();
    for (const e of evictionsOf(await f.audit())) perPod.set(e.objectRef!.name!, (perPod.get(e.objectRef!.name!) ?? 0) + 1);
    expect(perPod.size).toBe(30);
    expect([...perPod.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect((await f.pods()).filter((p) => p.spec?.nodeName === f.node)).toHaveLength(0);
  }, 180_000);
});

describe('an uncordon during the drain', () => {
  const f = new DrainFixture('it-uncordon');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('is undone at the next pass, with a warning in status', async () => {
    await f.deploy('web', 1);
    const [pod] = await f.waitRunning(1);
    await f.pdb('web', 1);
    const handle = await f.startDrain();
    await waitFor('blocked', async () => ((await handle.query(drainStatusQuery)).wave?.blocked.length ?? 0) > 0);
    await f.c.core.patchNode({ name: f.node, body: { spec: { unschedulable: null } } }, mergePatch);
    await waitFor('cordoned again', async () => (await f.c.core.readNode({ name: f.node })).spec?.unschedulable === true, { timeoutMs: 20_000 });
    const s = await handle.query(drainStatusQuery);
    expect(s.warnings).toContainEqual({ pod: '', warning: 'node was uncordoned during the drain; cordoned again' });
    await handle.signal(skipPodSignal, { namespace: f.ns, name: pod!.metadata!.name! });
    expect((await handle.result()).status.phase).toBe('Drained');
  });
});
