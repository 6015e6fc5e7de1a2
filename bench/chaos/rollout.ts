// The chaos scenario `rollout`: a rolling NodeMaintenance (docs/rolling-maintenance.md) over three kwok
// nodes, `<group>-0` and `-1` in partition zone-a and `-2` in zone-b, maxUnavailable 1, completion by
// the done annotation, through a real worker and a real bridge (each its own process, as nodes.ts).
// The runner plays the admin: it marks each node done once its status says AwaitingWork; once the
// maintenance is Drained it sets spec.stage Complete. One fault per run (a kill point of
// faults.ts: the first cordon, while AwaitingWork, after the bootID read, after a release and before
// the next node, at the partition switch). Judged by stack/invariants.ts (nothing stranded, no
// orphan workflow, in time) and stack/rollout-invariants.ts (from a watch of the Nodes: never more
// than maxUnavailable cordoned, no node started twice, none released before its work was marked
// done, nothing held after Complete). No pods: the rollout's order and holds are what is judged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { ROLLOUT_DONE_ANNOTATION } from '../../api/rollout.js';
import { API_VERSION } from '../../api/names.js';
import { apiStatus, createKube } from '../../kube/client.js';
import { mergePatch } from '../../kube/patch.js';
import { auditMark, readAuditSince } from '../../stack/audit-log.js';
import { judge, nodesAtEnd } from '../../stack/invariants.js';
import { deleteNodeGroups, ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { judgeRollout, RolloutRecorder } from '../../stack/rollout-invariants.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import type { Fault } from './faults.js';
import { killAndRestart, lingering, LOGS, nextStepAt, Proc, sleep, stack, waitFor, type RunOptions, type RunResult } from './run.js';

const NM = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural };
const MAINT_LABEL = 'chaos-maint';
const ZONE_LABEL = 'chaos-zone';
const RUN_LABEL = 'chaos-run';
const MAX_UNAVAILABLE = 1;

interface NmObject {
  metadata: { uid: string; resourceVersion: string };
  status?: { stageStatuses?: Array<{ name: string }>; conditions?: Array<{ type: string; status: string }>; nodeStatuses?: Array<{ nodeRef: { name: string }; phase?: string }> };
}

export async function runRolloutFault(fault: Fault, opts: RunOptions): Promise<RunResult> {
  const log = opts.log ?? (() => undefined);
  const kube = createKube();
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  const group = `chaos-${Date.now().toString(36)}`;
  const dir = join(LOGS, group);
  mkdirSync(dir, { recursive: true });
  const baseEnv = { ...process.env, SLIPWAY_TASK_QUEUE: group, SLIPWAY_WATCH_NAMESPACE: group, SLIPWAY_FAILPOINTS: '' };
  const workerFp = join(dir, 'worker.failpoints');
  const bridgeFp = join(dir, 'bridge.failpoints');
  const worker = new Proc('worker', [...WORKER_NODE_FLAGS, 'dist/worker/main.js'], { ...baseEnv, SLIPWAY_FAILPOINTS_FILE: workerFp }, join(dir, 'worker.log'));
  const bridge = new Proc('bridge', ['dist/bench/chaos/bridge.js'], { ...baseEnv, SLIPWAY_FAILPOINTS_FILE: bridgeFp, SLIPWAY_BRIDGE_IDENTITY: `${group}-bridge-0`, SLIPWAY_CHAOS_MAINTENANCES: `${RUN_LABEL}=${group}` }, join(dir, 'bridge.log'));
  const procs = [worker, bridge];
  const result: RunResult = { fault: fault.name, kind: fault.kind, outcome: '', phase: '', verdicts: [], group };
  const limitMs = opts.limitMs ?? 240_000;
  const recorder = new RolloutRecorder(kube, `${NODE_GROUP_LABEL}=${group}`, group);
  const readNm = async (): Promise<NmObject | null> => {
    try {
      return (await custom.getClusterCustomObject({ ...NM, name: group })) as NmObject;
    } catch (err) {
      if (apiStatus(err) === 404) return null;
      throw err;
    }
  };
  let admin = true;
  try {
    await stack('check').catch(() => stack('recover'));
    const nodes = await ensureFakeNodeGroup(kube.core, group, 3, { labels: { [MAINT_LABEL]: group } });
    const zones = ['zone-a', 'zone-a', 'zone-b'];
    for (const [i, n] of nodes.entries()) await kube.core.patchNode({ name: n, body: { metadata: { labels: { [ZONE_LABEL]: zones[i]! } } } }, mergePatch);
    await kube.core.createNamespace({ body: { metadata: { name: group } } });
    log(`${fault.name}: nodes ${nodes.join(', ')}`);
    if (fault.kind === 'point') writeFileSync(fault.process === 'worker' ? workerFp : bridgeFp, `${fault.arm ?? fault.name}\n`);
    await recorder.start();
    const mark = await auditMark();
    for (const p of procs) p.start();

    const t0 = Date.now();
    const created = (await custom.createClusterCustomObject({
      ...NM,
      body: {
        apiVersion: API_VERSION,
        kind: NODE_MAINTENANCE.kind,
        metadata: { name: group, labels: { [RUN_LABEL]: group } },
        spec: {
          nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: MAINT_LABEL, operator: 'In', values: [group] }] }] },
          stage: 'Drain',
          reason: 'chaos',
          rollout: { maxUnavailable: MAX_UNAVAILABLE, partitionBy: ZONE_LABEL, completion: { annotation: true } },
        },
      },
    })) as NmObject;
    const id = maintenanceWorkflowId({ name: group, uid: created.metadata.uid });
    const ids = [id, ...nodes.flatMap((n) => [maintenanceNodeWorkflowId(n), maintenanceDrainWorkflowId(n)])];
    // The admin: each node that awaits its work is marked done (its done annotation naming the maintenance).
    void (async () => {
      const marked = new Set<string>();
      while (admin) {
        const o = await readNm().catch(() => null);
        for (const n of o?.status?.nodeStatuses ?? []) {
          if (n.phase !== 'AwaitingWork' || marked.has(n.nodeRef.name)) continue;
          await kube.core.patchNode({ name: n.nodeRef.name, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: group } } } }, mergePatch).then(() => marked.add(n.nodeRef.name), () => undefined);
        }
        await sleep(500);
      }
    })();
    const drained = waitFor('the maintenance Drained', async () => (await readNm())?.status?.conditions?.some((c) => c.type === 'Drained' && c.status === 'True'), limitMs, 500).then(() =>
      custom.patchClusterCustomObject({ ...NM, name: group, body: { spec: { stage: 'Complete' } } }, mergePatch),
    );
    drained.catch(() => undefined);
    const ended = (async () => {
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
      await waitFor('the bridge done with the maintenance', async () => (await readNm())?.status?.stageStatuses?.some((s) => s.name === 'Complete'), 90_000, 500);
      return { phase, atMs: Date.now() };
    })();
    ended.catch(() => undefined);
    const timeout = sleep(limitMs).then(() => 'timeout' as const);

    let restartedAt: number | undefined;
    if (fault.kind === 'point' || fault.kind === 'random') {
      const k = await killAndRestart(fault, fault.process === 'worker' ? worker : bridge, ended, timeout, t0);
      result.outcome = k.outcome;
      restartedAt = k.restartedAt;
    } else result.outcome = fault.kind === 'none' ? 'undisturbed' : `server faults run the cycle scenario, not rollout: not reached`;
    if (restartedAt !== undefined) {
      const since = restartedAt;
      const at = await Promise.race([waitFor('the next step', () => nextStepAt(opts.client, ids, since), limitMs, 250).catch(() => undefined), timeout.then(() => undefined)]);
      if (at !== undefined) result.resumeMs = at - since;
    }
    const end = await Promise.race([ended, timeout]);
    if (end === 'timeout') result.endMs = Date.now() - t0;
    else {
      result.phase = end.phase;
      result.endMs = end.atMs - t0;
    }
    admin = false;

    await sleep(1500); // the audit log is written in batches; the watch's last versions
    const audit = (await readAuditSince(mark)).filter((e) => e.objectRef?.resource === 'nodes' && nodes.includes(e.objectRef.name ?? ''));
    const atEnd = await nodesAtEnd(kube, `${NODE_GROUP_LABEL}=${group}`);
    const base = judge({ pods: [], audit, drainedNodes: [], nodesAtEnd: atEnd, capacity: [], outcome: { phase: result.phase, tookMs: result.endMs ?? 0, limitMs }, runningWorkflows: await lingering(opts.client, ids, 30_000) });
    const rolling = judgeRollout({ versions: recorder.versions, limit: MAX_UNAVAILABLE, leftAtEnd: atEnd.filter((n) => n.unschedulable || n.held).map((n) => n.name) });
    result.verdicts = [...base, ...rolling];
  } catch (err) {
    result.error = (err as Error).message;
    log(`${fault.name}: ${(err as Error).stack}`);
  } finally {
    admin = false;
    recorder.close();
    for (const p of procs) await p.stop().catch(() => undefined);
    await custom.patchClusterCustomObject({ ...NM, name: group, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
    await custom.deleteClusterCustomObject({ ...NM, name: group }).catch(() => undefined);
    await kube.core.deleteNamespace({ name: group }).catch(() => undefined);
    await deleteNodeGroups(kube.core, (g) => g === group).catch(() => undefined);
  }
  return result;
}
