// The bridge's NodeMaintenance kind on the local stack (NM-7.11): one workflow per object even
// while Idle, status mirrored from maintenanceStatus, spec edits as specChanged, invalid specs
// reported (NM-4.7), deletion per NM-2.11–2.13, and no second workflow after a restart. The
// workflow here is the scripted stand-in (real type name, real messages, no node writes), so each
// case is driven at the moment the test chooses; the real stage machine has its own tests.
import { callerIdentity } from '../../starter/client.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { run } from '../../starter/cli/main.js';
// run() loads these on demand; jest's ESM loader needs them loaded up front.
import '../../starter/cli/commands.js';
import '../../starter/cli/session.js';
import '../../starter/cli/explain.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { receivedQuery, scriptHoldSignal, scriptMaintenanceSignal, type Received } from '../support/workflows/scripted-maintenance.js';
import { BridgeFixture } from '../support/bridge.js';
import { withSpecUnchecked } from '../support/admission.js';
import { Maintenances, noNodes, scriptedMaintenancePath } from '../support/bridge-maintenance.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { waitFor } from '../support/wait.js';
import { MAINTENANCE_FINALIZER } from '../../api/node-maintenance.js';
import type { RunningBridge } from '../../starter/bridge/main.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-bridge-nm');
const nm = new Maintenances(f);
let bridge: RunningBridge;

const startBridge = (tag = 'bridge') => f.bridge({ maintenances: true, queryIntervalMs: 200, tag });

beforeAll(async () => {
  await f.setup();
  await f.scriptedWorker(f.taskQueue, scriptedMaintenancePath());
  bridge = await startBridge();
  await waitFor('leads', async () => bridge.isLeader(), { timeoutMs: 40_000 });
});
afterAll(async () => {
  await f.stopBridges();
  await nm.cleanup();
  await f.teardown();
});

/** The object once the bridge has recorded its workflow. */
const running = (name: string) =>
  waitFor(`${name}: workflow recorded`, async () => {
    const o = await nm.get(name);
    return o?.status?.workflowId && o.status.stageStatuses ? o : undefined;
  });

const received = (workflowId: string) => f.client.workflow.getHandle(workflowId).query(receivedQuery);

test('NM-4.7 an invalid spec gets Ready=False InvalidSpec with every problem and a Warning Event, and no workflow or finalizer', async () => {
  const name = uniqueName('nm-bad');
  // Stored past admission (as an older CRD would have let it in): the bridge must still judge it.
  const created = await withSpecUnchecked(f.c.config, 'NodeMaintenance', () => nm.create(name, { nodeSelector: noNodes, stage: 'Sideways', drainPlan: [{ podType: 'Default' }] }));
  const o = await waitFor('InvalidSpec reported', async () => {
    const cur = await nm.get(name);
    return cur?.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'InvalidSpec') ? cur : undefined;
  });
  const ready = o.status!.conditions!.find((c) => c.type === 'Ready')!;
  expect(ready.status).toBe('False');
  expect(ready.message).toContain('spec.stage');
  expect(ready.message).toContain('spec.drainPlan[0].podPriority');
  await waitFor('InvalidSpec event', async () => (await nm.events(name, created.metadata.uid)).some((e) => e.reason === 'InvalidSpec' && e.type === 'Warning'));
  expect(o.metadata.finalizers ?? []).not.toContain(MAINTENANCE_FINALIZER);
  expect(o.status!.workflowId).toBeUndefined();
  expect(await nm.workflows(name)).toEqual([]);
  expect(await f.executions(maintenanceWorkflowId(created.metadata))).toBe(0);
});

test('NM-7.11 a valid Idle maintenance gets its workflow nm/<name>/<uid>, status mirrored; a restarted bridge starts no second one', async () => {
  const name = uniqueName('nm-idle');
  const created = await nm.create(name, { nodeSelector: noNodes, reason: 'kernel upgrade' });
  const id = maintenanceWorkflowId(created.metadata);
  const o = await running(name);
  expect(o.status).toMatchObject({ workflowId: id, observedGeneration: 1, stageStatuses: [{ name: 'Idle' }], selectedNodes: 0 });
  expect(o.status!.runId).toBeTruthy();
  expect(o.status!.drainPlan).toHaveLength(12);
  expect(o.status!.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Active' });
  expect(o.status!.conditions?.every((c) => c.lastTransitionTime)).toBe(true);
  const [start] = await received(id);
  expect(start).toMatchObject({ kind: 'start', input: { name, uid: created.metadata.uid, generation: 1, allowAllNodes: false, spec: { stage: 'Idle', reason: 'kernel upgrade' } } });
  expect((start as Received & { kind: 'start' }).input.createdAt).toBe(new Date(created.metadata.creationTimestamp!).toISOString());
  await waitFor('StageStarted Idle event', async () => (await nm.events(name)).some((e) => e.reason === 'StageStarted' && e.message === 'stage Idle started: kernel upgrade'));

  // A mirrored change from the workflow shows up in status, with the condition's transition time kept.
  const readyAt = o.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime;
  await f.client.workflow.getHandle(id).signal(scriptMaintenanceSignal, { selectedNodes: 3, message: 'Idle: 3 nodes would be drained\nsecond line' });
  const mirrored = await waitFor('mirrored', async () => ((await nm.get(name))?.status?.selectedNodes === 3 ? nm.get(name) : undefined));
  expect(mirrored!.status!.message).toBe('Idle: 3 nodes would be drained');
  expect(mirrored!.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe(readyAt);

  await f.stopBridge(bridge);
  bridge = await startBridge('restarted');
  await waitFor('leads again', async () => bridge.isLeader(), { timeoutMs: 40_000 });
  await f.client.workflow.getHandle(id).signal(scriptMaintenanceSignal, { selectedNodes: 4 });
  await waitFor('mirrored after restart', async () => (await nm.get(name))?.status?.selectedNodes === 4);
  expect(bridge.stats.workflowsStarted).toBe(0);
  expect(await f.executions(id)).toBe(1);
  expect((await nm.get(name))!.status!.runId).toBe(o.status!.runId);
});

test('the status mirror follows changes, not time: an idle workflow costs no status query, and a change is queried once and mirrored', async () => {
  const name = uniqueName('nm-quiet');
  const created = await nm.create(name, { nodeSelector: noNodes, stage: 'Idle' });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  await new Promise((r) => setTimeout(r, 1000)); // its start's tasks and queries settle
  // Other objects of this file may still be settling: count this workflow's history, not just the bridge's totals.
  const before = { queries: bridge.stats.statusQueries, events: (await f.client.workflow.getHandle(id).describe()).historyLength };
  await new Promise((r) => setTimeout(r, 4000)); // 20 queries' worth at the 200 ms interval of this bridge
  expect((await f.client.workflow.getHandle(id).describe()).historyLength).toBe(before.events); // nothing happened in it
  expect(bridge.stats.statusQueries - before.queries).toBe(0);

  const t0 = Date.now();
  await f.client.workflow.getHandle(id).signal(scriptMaintenanceSignal, { selectedNodes: 7 });
  await waitFor('mirrored', async () => (await nm.get(name))?.status?.selectedNodes === 7, { intervalMs: 50 });
  expect(Date.now() - t0).toBeLessThan(2000);
  const queries = bridge.stats.statusQueries - before.queries;
  expect(queries).toBeGreaterThanOrEqual(1);
  expect(queries).toBeLessThanOrEqual(2); // one per completed workflow task (the signal's)
});

test('NM-2.14 an edit of spec.stage goes as specChanged; observedGeneration moves and StageStarted names the stage and reason', async () => {
  const name = uniqueName('nm-edit');
  const created = await nm.create(name, { nodeSelector: noNodes, reason: 'rack move' });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  await nm.patch(name, { spec: { stage: 'Cordon' } });
  const o = await waitFor('generation 2 observed', async () => {
    const cur = await nm.get(name);
    return cur?.status?.observedGeneration === 2 && cur.status.stageStatuses?.some((s) => s.name === 'Cordon') ? cur : undefined;
  });
  expect(o.status!.stageStatuses!.map((s) => s.name)).toEqual(['Idle', 'Cordon']);
  expect((await received(id)).filter((r) => r.kind === 'specChanged')).toEqual([{ kind: 'specChanged', stage: 'Cordon', generation: 2, allowAllNodes: false }]);
  await waitFor('StageStarted Cordon', async () => (await nm.events(name)).some((e) => e.reason === 'StageStarted' && e.message === 'stage Cordon started: rack move'));
});

test('NM-2.16 a refused edit is a SpecChangeRefused Warning and observedGeneration moves all the same', async () => {
  const name = uniqueName('nm-refused');
  const created = await nm.create(name, { nodeSelector: noNodes, stage: 'Cordon' });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  // Backwards: CEL refuses it at admission, so only past admission can it reach the bridge.
  await withSpecUnchecked(f.c.config, 'NodeMaintenance', () => nm.patch(name, { spec: { stage: 'Idle' } }));
  await waitFor('generation 2 observed', async () => (await nm.get(name))?.status?.observedGeneration === 2);
  const ev = await waitFor('SpecChangeRefused', async () => (await nm.events(name)).find((e) => e.reason === 'SpecChangeRefused'));
  expect(ev.type).toBe('Warning');
  expect(ev.message).toContain('cannot go back from Cordon to Idle');
  expect((await received(id)).at(-1)).toMatchObject({ kind: 'specChanged', stage: 'Idle', refused: 'cannot go back from Cordon to Idle' });
});

test('NM-4.8 adding the allow-all-nodes annotation is sent to the workflow', async () => {
  const name = uniqueName('nm-allow');
  const created = await nm.create(name, { nodeSelector: noNodes });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  await nm.patch(name, { metadata: { annotations: { 'maintenance.slipway.dev/allow-all-nodes': 'true' } } });
  await waitFor('acknowledgement sent', async () => (await received(id)).some((r) => r.kind === 'specChanged' && r.allowAllNodes === true));
});

test('NM-2.11 deleting an Idle maintenance (no finalizer): the object goes at once and its workflow ends', async () => {
  const name = uniqueName('nm-del-idle');
  const created = await nm.create(name, { nodeSelector: noNodes });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  await nm.delete(name);
  expect(await nm.get(name)).toBeUndefined();
  const r = await f.client.workflow.getHandle(id).result();
  expect(r).toMatchObject({ stage: 'Idle', completed: true });
  expect((await f.client.workflow.getHandle(id).query(receivedQuery)).map((x) => x.kind)).toContain('deleting');
});

test('NM-2.12 deleting a maintenance past Idle: spec.stage=Complete, Complete runs, only then the finalizer goes', async () => {
  const name = uniqueName('nm-del-cordon');
  const created = await nm.create(name, { nodeSelector: noNodes, stage: 'Cordon' });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  // What the real workflow does when it leaves Idle (before its first node write, NM-2.3).
  await nm.patch(name, { metadata: { finalizers: [MAINTENANCE_FINALIZER] } });
  await f.client.workflow.getHandle(id).signal(scriptHoldSignal, true);
  await nm.delete(name);
  const deleting = await waitFor('stage Complete written, workflow told', async () => {
    const o = await nm.get(name);
    const got = await received(id);
    return o?.spec && (o.spec as { stage?: string }).stage === 'Complete' && got.some((x) => x.kind === 'deleting') ? { o, got } : undefined;
  });
  expect(deleting.o.metadata.deletionTimestamp).toBeTruthy();
  expect(deleting.o.metadata.finalizers).toContain(MAINTENANCE_FINALIZER);
  // The edited generation went first (a forward stage is accepted), then `deleting`.
  expect(deleting.got.filter((x) => x.kind !== 'start').map((x) => (x.kind === 'specChanged' ? `specChanged ${x.stage}` : x.kind))).toEqual(['specChanged Complete', 'deleting']);
  // Held in Complete: the object stays.
  await new Promise((r) => setTimeout(r, 1500));
  expect((await nm.get(name))?.metadata.finalizers).toContain(MAINTENANCE_FINALIZER);
  await f.client.workflow.getHandle(id).signal(scriptHoldSignal, false);
  await waitFor('object gone once Complete has run', async () => (await nm.get(name)) === undefined, { timeoutMs: 20_000 });
});

test('NM-2.13 deleting a completed maintenance: the finalizer goes promptly', async () => {
  const name = uniqueName('nm-del-done');
  const created = await nm.create(name, { nodeSelector: noNodes, stage: 'Cordon' });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  await nm.patch(name, { metadata: { finalizers: [MAINTENANCE_FINALIZER] } });
  await nm.patch(name, { spec: { stage: 'Complete' } });
  await f.client.workflow.getHandle(id).result();
  await waitFor('Complete mirrored', async () => (await nm.get(name))?.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Completed'));
  const t0 = Date.now();
  await nm.delete(name);
  await waitFor('object gone', async () => (await nm.get(name)) === undefined, { timeoutMs: 10_000 });
  expect(Date.now() - t0).toBeLessThan(5000);
});

test('NM-2.11 an Idle maintenance deleted while no bridge led: the next leader tells its workflow, which ends', async () => {
  const name = uniqueName('nm-orphan');
  const created = await nm.create(name, { nodeSelector: noNodes });
  const id = maintenanceWorkflowId(created.metadata);
  await running(name);
  await f.stopBridge(bridge);
  await nm.delete(name);
  expect(await nm.get(name)).toBeUndefined();
  bridge = await f.bridge({ maintenances: true, queryIntervalMs: 200, orphanGraceMs: 0, resyncIntervalMs: 500, tag: 'sweeper' });
  await waitFor('leads again', async () => bridge.isLeader(), { timeoutMs: 40_000 });
  await waitFor('workflow ended', async () => (await f.client.workflow.getHandle(id).describe()).status.name === 'COMPLETED', { timeoutMs: 20_000 });
  expect((await received(id)).map((r) => r.kind)).toEqual(['start', 'deleting']);
});

describe('NM-7.12 the CLI', () => {
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join('\n'), err };
  };

  test('maintenance <name> stage sends setStage (a refusal is one line, exit 1); status nm/<name> shows stage and per-node targets', async () => {
    const name = uniqueName('nm-cli');
    const created = await nm.create(name, { nodeSelector: noNodes });
    const id = maintenanceWorkflowId(created.metadata);
    await running(name);

    const ok = await cli('maintenance', name, 'stage', 'Cordon', '--reason', 'from the cli');
    expect(ok).toMatchObject({ code: 0, err: [] });
    expect(ok.out).toContain(`maintenance ${name}: stage Cordon`);
    expect((await received(id)).filter((r) => r.kind === 'setStage')).toEqual([{ kind: 'setStage', stage: 'Cordon', reason: 'from the cli', requestedBy: callerIdentity() }]);

    const back = await cli('maintenance', name, 'stage', 'Idle');
    expect(back.code).toBe(1);
    expect(back.err).toEqual([`slipway: setStage Idle refused by ${id}: cannot go back from Cordon to Idle`]);

    const node = uniqueName('nm-cli-node');
    await f.client.workflow.getHandle(id).signal(scriptMaintenanceSignal, {
      selectedNodes: 1,
      nodeStatuses: [
        {
          nodeRef: { name: node },
          drainTargets: [{ podType: 'Default', podPriority: 1000000000 }],
          drainMessage: 'Drain targets Default ≤ 1000000000: 1 pod blocked\n* Pods team-a/db-0: cannot evict: PDB team-a/db allows 0 disruptions',
          limitedBy: ['other-maintenance'],
          podsPendingEvictionRequest: 0,
          activeEvictionRequests: 1,
          podsBlocked: 1,
          podsKept: 0,
        },
      ],
    });
    for (const argv of [['status', `nm/${name}`], ['maintenance', name, 'status'], ['status', id]]) {
      const st = await cli(...argv);
      expect({ argv, code: st.code, err: st.err }).toEqual({ argv, code: 0, err: [] });
      expect(st.out).toContain(`${id} (running; Web UI:`);
      expect(st.out).toContain('stage Cordon');
      expect(st.out).toContain(`  ${node}: targets Default ≤ 1000000000; limited by other-maintenance`);
      expect(st.out).toContain('    * Pods team-a/db-0: cannot evict: PDB team-a/db allows 0 disruptions');
    }

    // retry-now goes to the node's coordinator nm-node/<node> (here a stand-in that only receives it).
    const noNode = await cli('retry-now', `nm/${name}`);
    expect(noNode).toMatchObject({ code: 1, err: [`slipway: ${id} is a maintenance: say which node with --node (its nodes: ${node})`] });
    const notCovered = await cli('retry-now', `nm/${name}`, '--node', 'elsewhere');
    expect(notCovered.err).toEqual([`slipway: node elsewhere is not selected by maintenance ${name} (its nodes: ${node})`]);
    const drainId = maintenanceNodeWorkflowId(node);
    f.track(drainId);
    await f.client.workflow.start('nodeMaintenanceWorkflow', {
      workflowId: drainId,
      taskQueue: f.taskQueue,
      args: [{ name: 'sink', uid: 'sink', createdAt: new Date().toISOString(), spec: { nodeSelector: noNodes } }],
    });
    const sent = await cli('retry-now', `nm/${name}`, '--node', node);
    expect(sent).toMatchObject({ code: 0, err: [] });
    expect(sent.out).toBe(`sent retry-now to ${drainId}`);
    const history = await f.client.workflow.getHandle(drainId).fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'retryNow')).toBe(true);
  });
});

describe('with the real maintenance workflow', () => {
  test('NM-7.11 a valid Idle maintenance runs nodeMaintenanceWorkflow as nm/<name>/<uid>, mirrored as Idle; a restarted bridge starts no second one; NM-2.11/2.12 deletion ends it, or runs Complete (uncordon) before the finalizer goes', async () => {
    await f.stopBridges(); // the scripted tests' bridge: one leader, and it must not start this object's workflow on its queue
    const taskQueue = uniqueName('it-bridge-nm-real-tq');
    const { worker, connection } = await createWorker({ deps: { kube: f.c }, settings: { ...temporalSettings(), taskQueue } });
    const working = worker.run();
    let b = await f.bridge({ maintenances: true, queryIntervalMs: 200, taskQueue, tag: 'real' });
    try {
      await waitFor('leads', async () => b.isLeader(), { timeoutMs: 40_000 });
      const name = uniqueName('nm-real');
      const created = await nm.create(name, { nodeSelector: noNodes, reason: 'real workflow' });
      const id = maintenanceWorkflowId(created.metadata);
      const o = await waitFor('Idle mirrored', async () => {
        const cur = await nm.get(name);
        return cur?.status?.workflowId === id && cur.status.stageStatuses?.some((s) => s.name === 'Idle') ? cur : undefined;
      });
      expect((await f.client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
      expect(o.status).toMatchObject({ observedGeneration: 1, selectedNodes: 0, stageStatuses: [{ name: 'Idle' }] });
      expect(o.status!.drainPlan).toHaveLength(12);
      expect(o.metadata.finalizers ?? []).not.toContain(MAINTENANCE_FINALIZER); // Idle holds nothing (NM-2.11)

      await f.stopBridge(b);
      b = await f.bridge({ maintenances: true, queryIntervalMs: 200, taskQueue, tag: 'real-restarted' });
      await waitFor('leads again', async () => b.isLeader(), { timeoutMs: 40_000 });
      await nm.patch(name, { metadata: { annotations: { touched: 'yes' } } }); // an event for the new bridge to reconcile
      await new Promise((r) => setTimeout(r, 1500));
      expect(b.stats.workflowsStarted).toBe(0);
      expect(await f.executions(id)).toBe(1);
      expect(await nm.workflows(name)).toHaveLength(1);

      // Deleted while Idle: the object goes at once and the workflow ends (NM-2.11).
      await nm.delete(name);
      await waitFor('workflow ended', async () => (await f.client.workflow.getHandle(id).describe()).status.name === 'COMPLETED', { timeoutMs: 20_000 });

      // NM-2.12 past Idle, with a node: the workflow adds the finalizer and cordons; deleting the
      // object runs Complete (the node is uncordoned) before the bridge lets the object go.
      const group = uniqueName('it-bridge-nm-real');
      const [node] = await ensureFakeNodeGroup(f.c.core, group, 1);
      await ensureFakeNodeGroup(f.c.core, `${group}-by`, 1); // not every node in the cluster (NM-4.8), even on a fresh stack
      try {
        const held = uniqueName('nm-real-cordon');
        const m = await nm.create(held, { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: [group] }] }] }, stage: 'Cordon' });
        await waitFor('cordoned, finalizer held', async () => {
          const o = await nm.get(held);
          const n = await f.c.core.readNode({ name: node! });
          return o?.metadata.finalizers?.includes(MAINTENANCE_FINALIZER) && n.spec?.unschedulable === true;
        }, { timeoutMs: 30_000 });
        await nm.delete(held);
        await waitFor('object gone', async () => (await nm.get(held)) === undefined, { timeoutMs: 30_000 });
        expect((await f.c.core.readNode({ name: node! })).spec?.unschedulable).toBeFalsy();
        expect((await f.client.workflow.getHandle(maintenanceWorkflowId(m.metadata)).describe()).status.name).toBe('COMPLETED');
        expect(f.logs.some((l) => l.includes(`/${held}: deleted; spec.stage set to Complete`))).toBe(true);
      } finally {
        await deleteGroupNodes(f.c, group);
        await deleteGroupNodes(f.c, `${group}-by`);
      }
    } finally {
      await f.stopBridge(b).catch(() => undefined);
      worker.shutdown();
      await working.catch(() => undefined);
      await connection.close();
    }
  }, 180_000);
});

describe('#24 the CLI against the real maintenance workflow', () => {
  let b: RunningBridge;
  let stop: () => Promise<void>;
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join('\n'), err };
  };
  /** An Idle maintenance selecting no node, once its workflow is mirrored. */
  const idle = async (prefix: string, reason: string) => {
    const name = uniqueName(prefix);
    const created = await nm.create(name, { nodeSelector: noNodes, reason });
    const id = maintenanceWorkflowId(created.metadata);
    await waitFor(`${name}: Idle mirrored`, async () => (await nm.get(name))?.status?.stageStatuses?.some((s) => s.name === 'Idle'));
    return { name, id, uid: created.metadata.uid };
  };
  /** The object once status.observedGeneration and every condition's equal metadata.generation (and `ok` holds). */
  const observed = (name: string, ok: (o: NonNullable<Awaited<ReturnType<typeof nm.get>>>) => boolean = () => true) =>
    waitFor(`${name}: its generation observed`, async () => {
      const o = await nm.get(name);
      const gen = o?.metadata.generation;
      return o && o.status?.observedGeneration === gen && o.status!.conditions?.length && o.status!.conditions.every((c) => c.observedGeneration === gen) && ok(o) ? o : undefined;
    }, { timeoutMs: 20_000 });

  beforeAll(async () => {
    await f.stopBridges();
    const taskQueue = uniqueName('it-bridge-nm-24-tq');
    const { worker, connection } = await createWorker({ deps: { kube: f.c }, settings: { ...temporalSettings(), taskQueue } });
    const working = worker.run();
    b = await f.bridge({ maintenances: true, queryIntervalMs: 200, taskQueue, tag: 'issue-24' });
    stop = async () => {
      await f.stopBridge(b).catch(() => undefined);
      worker.shutdown();
      await working.catch(() => undefined);
      await connection.close();
    };
    await waitFor('leads', async () => b.isLeader(), { timeoutMs: 40_000 });
  }, 60_000);
  afterAll(() => stop?.());

  test('#24.4 stage Complete from Idle ends the workflow at once: observedGeneration (status and conditions) still reaches metadata.generation; an edit after the end is observed too, with a SpecChangeRefused Warning', async () => {
    const m = await idle('nm-24-4', 'short one');
    const r = await cli('maintenance', m.name, 'stage', 'Complete');
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: [] });
    await waitFor('workflow completed', async () => (await f.client.workflow.getHandle(m.id).describe()).status.name === 'COMPLETED');
    const done = await observed(m.name, (o) => o.status!.conditions!.some((c) => c.type === 'Ready' && c.reason === 'Completed'));
    expect(done.metadata.generation).toBe(2);
    // The workflow wrote that generation itself (setStage): it was applied, no Warning.
    expect((await nm.events(m.name, m.uid)).filter((e) => e.reason === 'SpecChangeRefused')).toEqual([]);

    // Sibling: an edit once the workflow has ended can apply to nothing, and is observed all the same.
    await nm.patch(m.name, { spec: { reason: 'edited after the end' } });
    const edited = await observed(m.name, (o) => o.metadata.generation === 3);
    expect(edited.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ reason: 'Completed', observedGeneration: 3 });
    const warn = await waitFor('SpecChangeRefused', async () => (await nm.events(m.name, m.uid)).find((e) => e.reason === 'SpecChangeRefused'));
    expect(warn).toMatchObject({ type: 'Warning', message: `generation 3 not applied: workflow ${m.id} has completed` });
  });

  test('#24.8 stage <S> --reason R: spec.reason becomes R, and the StageStarted Event names R and "(setStage by <identity>)", every run', async () => {
    for (const round of [1, 2, 3]) {
      const m = await idle(`nm-24-8-${round}`, 'as created');
      const r = await cli('maintenance', m.name, 'stage', 'Cordon', '--reason', `firmware ${round}`);
      expect({ round, code: r.code, err: r.err }).toEqual({ round, code: 0, err: [] });
      const ev = await waitFor('StageStarted Cordon', async () => (await nm.events(m.name, m.uid)).find((e) => e.reason === 'StageStarted' && e.message?.startsWith('stage Cordon started')));
      expect({ round, message: ev.message }).toEqual({ round, message: `stage Cordon started: firmware ${round} (setStage by ${callerIdentity()})` });
      const o = await observed(m.name, (x) => x.status!.stageStatuses!.some((s) => s.name === 'Cordon'));
      expect((o.spec as { reason?: string }).reason).toBe(`firmware ${round}`);
      expect(o.status!.stageStatuses!.at(-1)).toMatchObject({ name: 'Cordon', requestedBy: callerIdentity() });
    }
  });
});
