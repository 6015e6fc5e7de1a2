// The chaos runs over kwok nodes (no cloud): a NodeMaintenance (scenarios `maintenance` and
// `maintenance-delete`) and the CLI's drain (`cli-drain`), each with one fault, through a real
// worker (and for a maintenance a real bridge) in its own process, as run.ts does for a cycle.
// Nodes `<group>-0` and `<group>-1` (label chaos-maint=<group>) carry the apps of run.ts (`a` wave 0
// under a PDB maxUnavailable 1, `b` wave 1 by a DrainRule order 100, `k` skip label, `s` Skip rule);
// `<group>-2` is added once they run, so the evicted pods have somewhere to go.
//   maintenance         created at stage Drain over the two nodes; once Drained, spec.stage Complete
//   maintenance-delete  the same; once Drained, the object is deleted (the bridge runs Complete)
//   cli-drain           `node dist/starter/cli.js drain <group>-0` (the drain/<node> workflow)
// Judged by stack/invariants.ts: no node deleted here, so `node-after-drain` has nothing to judge;
// `nothing-stranded` is every node of the group uncordoned and without a maintenance mark once the
// maintenance ended (the CLI drain's node stays cordoned by design: the others must not be);
// `capacity-kept` has no cloud to sample.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CustomObjectsApi, PolicyV1Api } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { apiStatus, createKube, type Kube } from '../../kube/client.js';
import { ensureNode, fakeNode } from '../../activities/providers/kwok-node.js';
import { createReadyNamespace } from '../../starter/namespace.js';
import { deleteNodeGroups, ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { auditMark, readAuditSince } from '../../stack/audit-log.js';
import { judge, nodesAtEnd, PodRecorder } from '../../stack/invariants.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { drainWorkflowId, maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import type { Fault } from './faults.js';
import { deployment, killAndRestart, lingering, LOGS, nextStepAt, Proc, ready, sleep, stack, waitFor, type RunOptions, type RunResult } from './run.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { DRAIN_LABEL } from '../../api/drain-plan.js';
import { API_VERSION } from '../../api/names.js';

const NM = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural };
const MAINT_LABEL = 'chaos-maint';
const RUN_LABEL = 'chaos-run';

interface NmObject {
  metadata: { uid: string; resourceVersion: string; finalizers?: string[] };
  status?: { stageStatuses?: Array<{ name: string }>; conditions?: Array<{ type: string; status: string }> };
}

/** Two nodes with the apps, then the spare node; answers the two nodes. */
async function setUp(kube: Kube, group: string): Promise<string[]> {
  const nodes = await ensureFakeNodeGroup(kube.core, group, 2, { labels: { [MAINT_LABEL]: group } });
  await kube.core.createNamespace({ body: { metadata: { name: group } } });
  await createReadyNamespace(kube.core, group);
  const apps = kube.config.makeApiClient(AppsV1Api);
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  await kube.config.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({ namespace: group, body: { metadata: { name: 'a' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'a' } } } } });
  const rule = (name: string, spec: unknown) => custom.createClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, body: { apiVersion: API_VERSION, kind: DRAIN_RULE.kind, metadata: { name }, spec } });
  await rule(`${group}-wave1`, { drain: { behavior: 'Drain', order: 100 }, pods: [{ selector: { matchLabels: { 'chaos-wave': group } } }] });
  await rule(`${group}-skip`, { drain: { behavior: 'Skip' }, pods: [{ selector: { matchLabels: { 'chaos-skip': group } } }] });
  // ScheduleAnyway: the cordoned nodes count in a hard spread's skew, so the evicted pods could not all move to the spare node.
  await apps.createNamespacedDeployment({ namespace: group, body: deployment('a', group, 4, {}, 'ScheduleAnyway') });
  await apps.createNamespacedDeployment({ namespace: group, body: deployment('b', group, 2, { 'chaos-wave': group }, 'ScheduleAnyway') });
  await apps.createNamespacedDeployment({ namespace: group, body: deployment('k', group, 2, { [DRAIN_LABEL]: 'skip' }, 'ScheduleAnyway') });
  await apps.createNamespacedDeployment({ namespace: group, body: deployment('s', group, 2, { 'chaos-skip': group }, 'ScheduleAnyway') });
  await waitFor('10 pods Running', async () => (await kube.core.listNamespacedPod({ namespace: group })).items.filter(ready).length === 10, 90_000);
  await ensureNode(kube.core, fakeNode({ name: `${group}-2`, nodeGroup: group }));
  await waitFor('the spare node Ready', async () => (await kube.core.readNode({ name: `${group}-2` })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 60_000);
  return nodes;
}

async function tearDown(kube: Kube, group: string, procs: Proc[]): Promise<void> {
  for (const p of procs) await p.stop().catch(() => undefined);
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  await custom.patchClusterCustomObject({ ...NM, name: group, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
  await custom.deleteClusterCustomObject({ ...NM, name: group }).catch(() => undefined);
  for (const r of ['wave1', 'skip']) await custom.deleteClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, name: `${group}-${r}` }).catch(() => undefined);
  await kube.core.deleteNamespace({ name: group }).catch(() => undefined);
  await deleteNodeGroups(kube.core, (g) => g === group).catch(() => undefined);
}

export async function runNodeFault(fault: Fault, opts: RunOptions): Promise<RunResult> {
  const log = opts.log ?? (() => undefined);
  const kube = createKube();
  const group = `chaos-${Date.now().toString(36)}`;
  const dir = join(LOGS, group);
  mkdirSync(dir, { recursive: true });
  const maintenance = fault.scenario === 'maintenance' || fault.scenario === 'maintenance-delete';
  const baseEnv = { ...process.env, SLIPWAY_TASK_QUEUE: group, SLIPWAY_WATCH_NAMESPACE: group, SLIPWAY_FAILPOINTS: '' };
  const workerFp = join(dir, 'worker.failpoints');
  const bridgeFp = join(dir, 'bridge.failpoints');
  const worker = new Proc('worker', [...WORKER_NODE_FLAGS, 'dist/worker/main.js'], { ...baseEnv, SLIPWAY_FAILPOINTS_FILE: workerFp }, join(dir, 'worker.log'));
  const bridge = new Proc('bridge', ['dist/bench/chaos/bridge.js'], { ...baseEnv, SLIPWAY_FAILPOINTS_FILE: bridgeFp, SLIPWAY_BRIDGE_IDENTITY: `${group}-bridge-0`, SLIPWAY_CHAOS_MAINTENANCES: `${RUN_LABEL}=${group}` }, join(dir, 'bridge.log'));
  const procs = maintenance ? [worker, bridge] : [worker];
  const result: RunResult = { fault: fault.name, kind: fault.kind, outcome: '', phase: '', verdicts: [], group };
  const limitMs = opts.limitMs ?? 180_000;
  const recorder = new PodRecorder(kube, group, (p) => ({
    skip: p.metadata?.labels?.[DRAIN_LABEL] === 'skip' || p.metadata?.labels?.['chaos-skip'] === group,
    wave: p.metadata?.labels?.['chaos-wave'] === group ? 1 : 0,
  }));
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  const readNm = async (): Promise<NmObject | null> => {
    try {
      return (await custom.getClusterCustomObject({ ...NM, name: group })) as NmObject;
    } catch (err) {
      if (apiStatus(err) === 404) return null;
      throw err;
    }
  };
  try {
    await stack('check').catch(() => stack('recover'));
    const nodes = await setUp(kube, group);
    log(`${fault.name}: nodes ${nodes.join(', ')} (spare ${group}-2)`);
    if (fault.kind === 'point') writeFileSync(fault.process === 'worker' ? workerFp : bridgeFp, `${fault.arm ?? fault.name}\n`);
    await recorder.start();
    const mark = await auditMark();
    for (const p of procs) p.start();

    const t0 = Date.now();
    let ids: string[];
    let ended: Promise<{ phase: string; atMs: number }>;
    if (maintenance) {
      const created = (await custom.createClusterCustomObject({
        ...NM,
        body: {
          apiVersion: API_VERSION,
          kind: NODE_MAINTENANCE.kind,
          metadata: { name: group, labels: { [RUN_LABEL]: group } },
          spec: { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: MAINT_LABEL, operator: 'In', values: [group] }] }] }, stage: 'Drain', reason: 'chaos' },
        },
      })) as NmObject;
      const id = maintenanceWorkflowId({ name: group, uid: created.metadata.uid });
      ids = [id, ...nodes.flatMap((n) => [maintenanceNodeWorkflowId(n), maintenanceDrainWorkflowId(n)])];
      // Drained → Complete (or the object deleted): the maintenance's end.
      const drained = waitFor('the maintenance Drained', async () => (await readNm())?.status?.conditions?.some((c) => c.type === 'Drained' && c.status === 'True'), limitMs, 500).then(async () => {
        if (fault.scenario === 'maintenance-delete') await custom.deleteClusterCustomObject({ ...NM, name: group });
        else await custom.patchClusterCustomObject({ ...NM, name: group, body: { spec: { stage: 'Complete' } } }, mergePatch);
      });
      drained.catch(() => undefined);
      ended = (async () => {
        const handle = await waitFor('the workflow', async () => {
          const h = opts.client.workflow.getHandle(id);
          await h.describe();
          return h;
        }, limitMs, 500);
        let phase: string;
        try {
          const r = (await handle.result()) as { completed?: boolean };
          phase = r.completed ? 'Successful' : 'Failed';
        } catch (err) {
          phase = `${(await handle.describe()).status.name}: ${(err as Error).message}`;
        }
        await waitFor('the bridge done with the maintenance', async () => {
          const o = await readNm();
          return fault.scenario === 'maintenance-delete' ? o === null : o?.status?.stageStatuses?.some((s) => s.name === 'Complete');
        }, 90_000, 500);
        return { phase, atMs: Date.now() };
      })();
    } else {
      const node = nodes[0]!;
      ids = [drainWorkflowId(node)];
      const fd = openSync(join(dir, 'cli.log'), 'a');
      const cli = spawn('node', ['dist/starter/cli.js', 'drain', node], { env: baseEnv, stdio: ['ignore', fd, fd] });
      const exited = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
      ended = (async () => {
        const handle = await waitFor('the drain workflow', async () => {
          const h = opts.client.workflow.getHandle(ids[0]!);
          await h.describe();
          return h;
        }, limitMs, 500);
        let phase: string;
        try {
          const r = (await handle.result()) as { status?: { phase?: string } };
          phase = r.status?.phase === 'Drained' ? 'Successful' : `Failed (${r.status?.phase})`;
        } catch (err) {
          phase = `${(await handle.describe()).status.name}: ${(err as Error).message}`;
        }
        const code = await Promise.race([exited, sleep(30_000).then(() => 'still running' as const)]);
        if (code !== 0) phase = `${phase}; the CLI ${code === 'still running' ? 'still running' : `exited ${code}`}`;
        if (code === 'still running') cli.kill('SIGKILL');
        return { phase, atMs: Date.now() };
      })();
    }
    ended.catch(() => undefined);
    const timeout = sleep(limitMs).then(() => 'timeout' as const);

    // The fault.
    let restartedAt: number | undefined;
    if (fault.kind === 'point' || fault.kind === 'random') {
      const k = await killAndRestart(fault, fault.process === 'worker' ? worker : bridge, ended, timeout, t0);
      result.outcome = k.outcome;
      restartedAt = k.restartedAt;
    } else if (fault.kind === 'none') {
      result.outcome = 'undisturbed';
    } else {
      result.outcome = `server faults run the cycle scenario, not ${fault.scenario}: not reached`;
    }

    // Time to resume: the restart → the next activity completed in the maintenance's workflows (for the bridge: its next write to the object).
    if (restartedAt !== undefined) {
      const since = restartedAt;
      const bridgeKilled = fault.kind !== 'none' && fault.kind !== 'server' && fault.process === 'bridge';
      const rv = bridgeKilled ? (await readNm().catch(() => undefined))?.metadata.resourceVersion : undefined;
      const resumed = await Promise.race([
        waitFor('the next step', async () => {
          if (bridgeKilled) {
            const o = await readNm();
            return o === null || o.metadata.resourceVersion !== rv ? Date.now() : undefined;
          }
          return nextStepAt(opts.client, ids, since);
        }, limitMs, 250).catch(() => undefined),
        ended.then(() => undefined),
        timeout.then(() => undefined),
      ]);
      // Ended while the probe looked: the worker's step is in the histories; the bridge's write is what ended it (the object gone, or its end mirrored).
      const endedAt = (await Promise.race([ended, sleep(0).then(() => undefined)]))?.atMs;
      const at = resumed ?? (endedAt === undefined ? undefined : bridgeKilled ? endedAt : await nextStepAt(opts.client, ids, since).catch(() => undefined));
      if (at !== undefined) result.resumeMs = at - since;
    }

    const end = await Promise.race([ended, timeout]);
    if (end === 'timeout') result.endMs = Date.now() - t0;
    else {
      result.phase = end.phase;
      result.endMs = end.atMs - t0;
    }

    await sleep(1500); // the audit log is written in batches
    const groupNodes = [...nodes, `${group}-2`];
    const audit = (await readAuditSince(mark)).filter((e) => e.objectRef?.namespace === group || (e.objectRef?.resource === 'nodes' && groupNodes.includes(e.objectRef.name ?? '')));
    const atEnd = await nodesAtEnd(kube, `${NODE_GROUP_LABEL}=${group}`);
    result.verdicts = judge({
      pods: recorder.list(),
      audit,
      drainedNodes: [],
      // The CLI's drained node stays cordoned (as kubectl drain leaves it): the others must not be.
      nodesAtEnd: fault.scenario === 'cli-drain' ? atEnd.filter((n) => n.name !== nodes[0]) : atEnd,
      capacity: [],
      outcome: { phase: result.phase, tookMs: result.endMs ?? 0, limitMs },
      runningWorkflows: await lingering(opts.client, ids, 30_000),
    });
    if (fault.scenario === 'cli-drain') {
      const drainedNode = atEnd.find((n) => n.name === nodes[0]);
      if (drainedNode && !drainedNode.unschedulable) result.error = `${nodes[0]} not cordoned after its drain`;
    }
  } catch (err) {
    result.error = (err as Error).message;
    log(`${fault.name}: ${(err as Error).stack}`);
  } finally {
    recorder.close();
    await tearDown(kube, group, procs);
  }
  return result;
}
