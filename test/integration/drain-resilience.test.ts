// Bad input touches nothing, and a worker killed mid-wave does not make the drain evict twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { drainStatusQuery, skipPodSignal } from '../../workflows/messages.js';
import { DrainFixture, evictionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { uniqueName } from '../support/cluster.js';
import { deleteDrainRule, storeUnvalidatedDrainRule } from '../support/drain-rules.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

describe('an invalid DrainRule at drain time', () => {
  const f = new DrainFixture('it-badrule');
  const name = uniqueName('it-bad-rule');
  beforeAll(() => f.setup());
  afterAll(async () => {
    await deleteDrainRule(f.c, name);
    await f.teardown();
  });

  test('holds the drain before cordoning or evicting anything, naming the rule and the problem; deleting the rule lets it run', async () => {
    // Stored past today's admission checks, as an older CRD would have let it in. Its unknown
    // operator leaves no way to tell which pods it takes, so every drain of its nodes holds.
    await storeUnvalidatedDrainRule(f.c, name, {
      drain: { behavior: 'Skip' },
      nodes: [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } }],
      pods: [{ selector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['web'] }] } }],
    });
    await f.deploy('web', 1);
    await f.waitRunning(1);
    await f.addSpare();
    const handle = await f.startDrain();
    const held = await waitFor('the drain held', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.heldBy.length ? s : undefined;
    });
    expect(held.phase).toBe('Pending');
    expect(held.heldBy[0]).toContain(`DrainRule ${name} is invalid`);
    expect(held.heldBy[0]).toContain('spec.pods[0].selector.matchExpressions[0].operator');
    await new Promise((r) => setTimeout(r, 3000));
    expect((await f.c.core.readNode({ name: f.node })).spec?.unschedulable).toBeFalsy();
    expect(evictionsOf(await f.audit())).toHaveLength(0);

    await deleteDrainRule(f.c, name);
    const result = await handle.result();
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 1, heldBy: [] });
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
