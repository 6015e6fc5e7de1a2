// Records the histories that test/workflow/replay.test.ts replays: real runs on the local stack,
// fetched from Temporal and written here as JSON (the format `temporal workflow show -o json` and
// the Web UI's download use). Not part of `npm test`: run `npm run record-histories` (on a shared
// stack, under its lock; `-- -t <scenario>` for one), review the diff, and commit the files. See
// docs/design.md, "Workflow tests and replay tests".
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { SchedulingV1Api } from '@kubernetes/client-node';
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { hookAnnotation } from '../../api/lifecycle-hooks.js';
import { drainWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery, drainStatusQuery, drainTargetsSignal } from '../../workflows/messages.js';
import { uniqueName } from '../support/cluster.js';
import { CycleFixture } from '../support/cycle.js';
import { DrainFixture } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { deleteDrainRule, storeUnvalidatedDrainRule } from '../support/drain-rules.js';
import { historyToJson } from '../support/histories.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { ROLLOUT_DONE_ANNOTATION } from '../../api/rollout.js';

const DIR = 'test/histories';
const ROLE: Record<string, string> = { cycleNodeWorkflow: 'node', nodeGroupLockWorkflow: 'lock', drainWorkflow: 'drain', maintenanceNodeWorkflow: 'coordinator' };

/** Writes `<scenario>.<role>.json` for a workflow and, recursively, for each child it started (by type and start order). */
async function saveTree(client: Client, file: string, workflowId: string, runId?: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  writeFileSync(join(DIR, `${file}.json`), `${JSON.stringify(historyToJson(history), null, 1)}\n`);
  const written = [file];
  const perType = new Map<string, number>();
  for (const e of history.events ?? []) {
    const child = e.childWorkflowExecutionStartedEventAttributes;
    if (!child) continue;
    const type = ROLE[child.workflowType!.name!] ?? child.workflowType!.name!;
    const i = perType.get(type) ?? 0;
    perType.set(type, i + 1);
    written.push(...(await saveTree(client, `${file}.${type}-${i}`, child.workflowExecution!.workflowId!, child.workflowExecution!.runId!)));
  }
  return written;
}

/** Removes a scenario's earlier files, so children a new run no longer starts do not linger. */
function clear(scenario: string): void {
  for (const f of readdirSync(DIR)) if (f.startsWith(`${scenario}.`) && f.endsWith('.json')) rmSync(join(DIR, f));
}

describe('recording histories for the replay test', () => {
  test('drain-waves-pdb: two waves, the second blocked by a PDB until capacity returns', async () => {
    const f = await new DrainFixture('it-rec-waves').setup();
    try {
      await f.deploy('first', 1, { tier: 'first' });
      await f.deploy('web', 2);
      await f.waitRunning(3);
      await f.pdb('web', 2);
      await f.addSpare();
      const h = await f.startDrain({ drainPlan: [{ podSelector: { matchLabels: { tier: 'first' } } }] });
      await waitFor('wave 1 blocked by the PDB', async () => {
        const s = await h.query(drainStatusQuery);
        return s.wave?.order === 1 && s.wave.blocked.length > 0;
      });
      await f.c.apps.patchNamespacedDeployment({ name: 'web', namespace: f.ns, body: { spec: { replicas: 3 } } }, mergePatch);
      const r = await h.result();
      expect(r.status).toMatchObject({ phase: 'Drained', completedWaves: [0, 1], evicted: 3 });
      clear('drain-waves-pdb');
      await saveTree(f.client, 'drain-waves-pdb', h.workflowId);
    } finally {
      await f.teardown();
    }
  });

  test('drain-waves-look: two waves, each wave wait ending with the next pass\'s look (no classify after it)', async () => {
    const f = await new DrainFixture('it-rec-look').setup();
    try {
      await f.deploy('first', 1, { tier: 'first' });
      await f.deploy('web', 2);
      await f.waitRunning(3);
      await f.addSpare();
      const h = await f.startDrain({ drainPlan: [{ podSelector: { matchLabels: { tier: 'first' } } }] });
      const r = await h.result();
      expect(r.status).toMatchObject({ phase: 'Drained', completedWaves: [0, 1], evicted: 3 });
      const scheduled = ((await h.fetchHistory()).events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name!] : []));
      expect(scheduled.filter((n) => n === 'classifyPods')).toHaveLength(2); // the first read and the one it finishes on
      clear('drain-waves-look');
      await saveTree(f.client, 'drain-waves-look', h.workflowId);
    } finally {
      await f.teardown();
    }
  });

  test('drain-targets: targets mode, [Default ≤ 1000] then [Default ≤ MAX, DaemonSet ≤ MAX] final by signal, reporting to a receiver', async () => {
    const f = await new DrainFixture('it-rec-targets').setup();
    const pc = `${f.group}-high`;
    const receiverId = uniqueName('it-rec-targets-reports');
    const scheduling = f.c.config.makeApiClient(SchedulingV1Api);
    try {
      await scheduling.createPriorityClass({ body: { metadata: { name: pc }, value: 5000 } });
      await f.deploy('low', 1);
      const t = f.podTemplate({ app: 'high' }, 1);
      await f.c.apps.createNamespacedDeployment({
        namespace: f.ns,
        body: { metadata: { name: 'high' }, spec: { replicas: 1, selector: { matchLabels: { app: 'high' } }, template: { ...t, spec: { ...t.spec, priorityClassName: pc } } } },
      });
      await f.c.apps.createNamespacedDaemonSet({ namespace: f.ns, body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: f.podTemplate({ app: 'agent' }) } } });
      await f.waitRunning(3);
      await f.addSpare();
      // The receiver is a workflow nobody runs: it accepts the drain's reports.
      await f.client.workflow.start('reportReceiver', { taskQueue: `${receiverId}-nobody`, workflowId: receiverId, args: [] });
      const h = await f.client.workflow.start(drainWorkflow, {
        taskQueue: f.taskQueue,
        workflowId: uniqueName('it-rec-targets-drain'),
        args: [{ nodeName: f.node, reportTo: receiverId, targets: { lanes: [{ podType: 'Default', podPriority: 1000 }], final: false, seq: 1 } }],
      });
      await waitFor('finished at targets #1', async () => (await h.query(drainStatusQuery)).finished === true);
      await h.signal(drainTargetsSignal, { lanes: [{ podType: 'Default', podPriority: MAX_PRIORITY }, { podType: 'DaemonSet', podPriority: MAX_PRIORITY }], final: true, seq: 2 });
      const r = await h.result();
      expect(r.status).toMatchObject({ phase: 'Drained', evicted: 2, finished: true });
      clear('drain-targets');
      await saveTree(f.client, 'drain-targets', h.workflowId);
    } finally {
      await f.client?.workflow.getHandle(receiverId).terminate('recorded').catch(() => undefined);
      await scheduling.deletePriorityClass({ name: pc }).catch(() => undefined);
      await f.teardown();
    }
  });

  test('drain-held-rule: held by an invalid DrainRule in Pending, resumed once it is deleted', async () => {
    const f = await new DrainFixture('it-rec-held').setup();
    const rule = uniqueName('it-rec-invalid-rule');
    try {
      await f.deploy('web', 1);
      await f.waitRunning(1);
      await f.addSpare();
      // order 2^31 is outside int32: stored past the CRD's check, refused by the drain's.
      await storeUnvalidatedDrainRule(f.c, rule, {
        drain: { behavior: 'Drain', order: 2 ** 31 },
        nodes: [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } } }],
        pods: [{ selector: { matchLabels: { app: 'web' } } }],
      });
      const h = await f.startDrain();
      await waitFor('the drain held', async () => (await h.query(drainStatusQuery)).heldBy.length > 0);
      await deleteDrainRule(f.c, rule);
      const r = await h.result();
      expect(r.status).toMatchObject({ phase: 'Drained', heldBy: [], evicted: 1 });
      clear('drain-held-rule');
      await saveTree(f.client, 'drain-held-rule', h.workflowId);
    } finally {
      await deleteDrainRule(f.c, rule);
      await f.teardown();
    }
  });

  test('cycle-kwok: a 2-node kwok group cycled one node at a time (request, lock, node cycles, drains)', async () => {
    const f = await new CycleFixture('it-rec-cycle').setup();
    try {
      await ensureFakeNodeGroup(f.c.core, f.group, 2);
      await f.app(2, 1);
      await waitFor('2 app pods Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => p.status?.phase === 'Running').length === 2);
      const h = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 1 } });
      const r = await h.result();
      expect(r).toMatchObject({ phase: 'Successful', nodesCycled: 2 });
      clear('cycle-kwok');
      const files = await saveTree(f.client, 'cycle-kwok', h.workflowId);
      expect(files.sort()).toEqual(['cycle-kwok', 'cycle-kwok.lock-0', 'cycle-kwok.node-0', 'cycle-kwok.node-0.drain-0', 'cycle-kwok.node-1', 'cycle-kwok.node-1.drain-0']);
    } finally {
      await f.teardown();
    }
  }, 240_000);

  test('cycle-hooks: a 1-node kwok cycle held by a pre-drain hook, then by a pre-terminate hook, each removed once the cycle waits for it', async () => {
    const f = await new CycleFixture('it-rec-hooks').setup();
    try {
      const [node] = await ensureFakeNodeGroup(f.c.core, f.group, 1);
      const annotate = (key: string, value: string | null) => f.c.core.patchNode({ name: node!, body: { metadata: { annotations: { [key]: value } } } }, mergePatch);
      await annotate(hookAnnotation('pre-drain', 'backup'), '');
      await annotate(hookAnnotation('pre-terminate', 'snapshot'), '');
      await f.app(1, 0);
      await waitFor('the app pod Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.some((p) => p.status?.phase === 'Running'));
      const h = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 1 } });
      const waiting = (text: string) => waitFor(text, async () => (await h.query(cycleStatusQuery)).nodes.some((n) => `${n.drainMessage ?? ''} ${n.message ?? ''}`.includes(text)), { timeoutMs: 90_000 });
      await waiting('waiting for pre-drain hooks: backup');
      await annotate(hookAnnotation('pre-drain', 'backup'), null);
      await waiting('waiting for pre-terminate hooks: snapshot');
      await annotate(hookAnnotation('pre-terminate', 'snapshot'), null);
      expect(await h.result()).toMatchObject({ phase: 'Successful', nodesCycled: 1 });
      clear('cycle-hooks');
      const files = await saveTree(f.client, 'cycle-hooks', h.workflowId);
      expect(files.sort()).toEqual(['cycle-hooks', 'cycle-hooks.lock-0', 'cycle-hooks.node-0', 'cycle-hooks.node-0.drain-0']);
    } finally {
      await f.teardown();
    }
  }, 240_000);

  test('cycle-heal: replacements fail their health check, so healing puts the detached nodes back', async () => {
    const unhealthy = createServer((_req, res) => {
      res.statusCode = 503;
      res.end('not ready');
    });
    await new Promise<void>((r) => unhealthy.listen(0, '127.0.0.1', r));
    const port = (unhealthy.address() as { port: number }).port;
    const f = await new CycleFixture('it-rec-heal').setup();
    try {
      await ensureFakeNodeGroup(f.c.core, f.group, 2);
      const h = await f.start({
        selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } },
        cycleSettings: { concurrency: 2 },
        skipInitialHealthChecks: true,
        healthChecks: [{ endpoint: `http://127.0.0.1:${port}/healthz?node={{ .NodeIP }}`, waitPeriod: '3s' }],
      });
      await expect(h.result()).rejects.toThrow();
      expect(await h.query(cycleStatusQuery)).toMatchObject({ phase: 'Failed', message: expect.stringContaining('did not pass their health checks') });
      clear('cycle-heal');
      const files = await saveTree(f.client, 'cycle-heal', h.workflowId);
      expect(files.sort()).toEqual(['cycle-heal', 'cycle-heal.lock-0']);
    } finally {
      unhealthy.close();
      await f.teardown();
    }
  }, 120_000);

  test('maintenance-shared: two maintenances share a node (one PDB-blocked pod), drain to the end and complete (maintenances, coordinators, drains)', async () => {
    const f = await new MaintenanceFixture('it-rec-nm').setup(2);
    try {
      const [one, two] = f.nodes as [string, string];
      await f.pod('p1', one, 4000);
      await f.pod('p2', one, 8000);
      await f.pod('q1', two, 5000);
      await f.waitRunning(3);
      await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: 'q1' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'q1' } } } } });
      await waitFor('PDB q1 computed', async () => (await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'q1', namespace: f.ns })).status?.observedGeneration === 1);
      const names = (...n: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: n }] }] });
      const a = await f.create(`${f.group}-a`, { nodeSelector: names(one, two), stage: 'Drain', drainPlan: [{ podPriority: 5000 }, { podPriority: 15000 }] });
      const b = await f.create(`${f.group}-b`, { nodeSelector: names(one), stage: 'Cordon', drainPlan: [{ podPriority: 10000 }] });
      await f.statusWhen(a, 'a held by the PDB', (s) => s.nodeStatuses.some((n) => n.podsBlocked === 1));
      await b.executeUpdate(setStageUpdate, { args: [{ stage: 'Drain' }] });
      await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'q1', namespace: f.ns });
      for (const h of [a, b]) await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 150_000);
      for (const h of [a, b]) await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await Promise.all([a.result(), b.result()]);
      clear('maintenance-shared');
      const files = [...(await saveTree(f.client, 'maintenance-shared.a', a.workflowId)), ...(await saveTree(f.client, 'maintenance-shared.b', b.workflowId))];
      expect(files.some((x) => x.includes('coordinator'))).toBe(true);
      expect(files.some((x) => x.includes('drain'))).toBe(true);
    } finally {
      await f.teardown();
    }
  }, 240_000);

  test('maintenance-rollout: a rolling maintenance over two nodes, one at a time, each released when the done annotation names it (maintenance, coordinators, drains)', async () => {
    const f = await new MaintenanceFixture('it-rec-ro').setup(2);
    try {
      const [one, two] = f.nodes as [string, string];
      await f.pod('r1', one, 1000);
      await f.pod('r2', two, 1000);
      await f.waitRunning(2);
      const name = `${f.group}-roll`;
      const h = await f.create(name, {
        nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [one, two] }] }] },
        stage: 'Drain',
        rollout: { maxUnavailable: 1, completion: { annotation: true } },
      });
      for (const node of [one, two]) {
        await f.statusWhen(h, `${node} AwaitingWork`, (s) => s.nodeStatuses.some((n) => n.nodeRef.name === node && n.phase === 'AwaitingWork'), 150_000);
        await f.c.core.patchNode({ name: node, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch);
      }
      await f.statusWhen(h, 'rollout Done', (s) => s.rollout?.phase === 'Done', 150_000);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      clear('maintenance-rollout');
      const files = await saveTree(f.client, 'maintenance-rollout', h.workflowId);
      expect(files.some((x) => x.includes('coordinator'))).toBe(true);
    } finally {
      await f.teardown();
    }
  }, 240_000);
});
