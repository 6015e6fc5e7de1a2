// #27 on the local stack: rolling maintenances (docs/rolling-maintenance.md) run by the real worker
// and the bridge against the apiserver and kwok. A Node watch over each run records every cordon and
// uncordon, so "at most n cordoned at once", "zones in order" and "no node started twice" are
// judged from what the apiserver saw, not from the workflow's own account. A reboot is stood in
// for by patching the Node's status: a new status.nodeInfo.bootID with Ready False, then Ready True
// (kwok's heartbeat rewrites only the conditions it manages and keeps nodeInfo as it finds it).
import { CustomObjectsApi, Watch, type V1Node } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { ROLLOUT_DONE_ANNOTATION } from '../../api/rollout.js';
import { mergePatch, strategicMergePatch } from '../../kube/patch.js';
import type { RunningBridge } from '../../starter/bridge/main.js';
import type { NodeMaintenanceObject } from '../../starter/bridge/maintenance/objects.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId } from '../../workflows/ids.js';
import { maintenanceStatusQuery } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { BridgeFixture } from '../support/bridge.js';
import { Maintenances } from '../support/bridge-maintenance.js';
import { cli, expectOneLineError } from '../support/cli.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const ZONE = 'topology.kubernetes.io/zone';
/** Marks the nodes of one test: its maintenance selects them by it. */
const RUN_LABEL = 'it.slipway.dev/rollout';

const f = new BridgeFixture('it-nm-roll');
const nm = new Maintenances(f);
const custom = f.c.config.makeApiClient(CustomObjectsApi);
const budgets = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural };
const groups: string[] = [];
const allNodes: string[] = [];
const budgetNames: string[] = [];
const stops: AbortController[] = [];
let bridge: RunningBridge;

beforeAll(async () => {
  await f.setup();
  await f.realWorker();
  bridge = await f.leadingBridge({ maintenances: true });
}, 120_000);

afterAll(async () => {
  for (const s of stops) s.abort();
  await nm.cleanup();
  for (const name of budgetNames) await custom.deleteClusterCustomObject({ ...budgets, name }).catch(() => undefined);
  for (const n of allNodes) {
    await f.client.workflow.getHandle(maintenanceNodeWorkflowId(n)).terminate('test over').catch(() => undefined);
    await f.client.workflow.getHandle(maintenanceDrainWorkflowId(n)).terminate('test over').catch(() => undefined);
  }
  await f.stopBridges();
  for (const g of groups) await deleteGroupNodes(f.c, g);
  await f.teardown();
}, 180_000);

/** `perZone` nodes in each zone (`<run>-<zone>-<i>`), labelled for this run, each with a recorded bootID and one pod. */
async function fleet(run: string, zones: string[], perZone: number): Promise<string[]> {
  const names: string[] = [];
  for (const zone of zones) {
    const group = `${run}-${zone}`;
    groups.push(group);
    names.push(...(await ensureFakeNodeGroup(f.c.core, group, perZone, { zone, labels: { [RUN_LABEL]: run } })));
  }
  allNodes.push(...names);
  // kwok leaves bootID empty; a real kubelet reports one, and reboot completion needs it (RM-3.2).
  for (const n of names) await setStatus(n, { nodeInfo: { bootID: `${n}-boot-1` } });
  for (const n of names) await pinnedPod(n);
  return names;
}

/** A one-replica Deployment whose pod runs on `node` (evicted by the drain, back once it is uncordoned). */
async function pinnedPod(node: string): Promise<void> {
  await f.c.apps.createNamespacedDeployment({
    namespace: f.ns,
    body: {
      metadata: { name: node },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: node } },
        template: {
          metadata: { labels: { app: node } },
          spec: { nodeSelector: { 'kubernetes.io/hostname': node }, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
        },
      },
    },
  });
}

async function setStatus(node: string, status: object): Promise<void> {
  await f.c.core.patchNodeStatus({ name: node, body: { status } }, strategicMergePatch);
}

const bootOf = async (node: string) => (await f.c.core.readNode({ name: node })).status?.nodeInfo?.bootID;

/** What a reboot looks like to the apiserver: a new bootID while NotReady, then Ready again. */
async function reboot(node: string): Promise<string> {
  const boot = `${node}-boot-2`;
  await setStatus(node, { nodeInfo: { bootID: boot }, conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'rebooting' }] });
  await setStatus(node, { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] });
  return boot;
}

interface Cordons {
  /** Every change of a node's cordon, in the order the watch saw them. */
  log: Array<{ node: string; cordoned: boolean }>;
  /** The most nodes cordoned at once. */
  peak: () => number;
  /** Nodes cordoned now. */
  now: () => Set<string>;
}

/** A Node watch over the run's nodes, recording each cordon and uncordon. */
async function watchCordons(run: string): Promise<Cordons> {
  const state = new Map<string, boolean>();
  const log: Cordons['log'] = [];
  let peak = 0;
  const list = await f.c.core.listNode({ labelSelector: `${RUN_LABEL}=${run}` });
  for (const n of list.items) state.set(n.metadata!.name!, n.spec?.unschedulable === true);
  stops.push(
    await new Watch(f.c.config).watch(
      '/api/v1/nodes',
      { resourceVersion: list.metadata?.resourceVersion, labelSelector: `${RUN_LABEL}=${run}` },
      (type, n: V1Node) => {
        const name = n.metadata!.name!;
        const cordoned = type !== 'DELETED' && n.spec?.unschedulable === true;
        if ((state.get(name) ?? false) === cordoned) return;
        state.set(name, cordoned);
        log.push({ node: name, cordoned });
        peak = Math.max(peak, [...state.values()].filter(Boolean).length);
      },
      () => undefined,
    ),
  );
  return { log, peak: () => peak, now: () => new Set([...state].filter(([, c]) => c).map(([n]) => n)) };
}

const selectRun = (run: string) => ({ nodeSelectorTerms: [{ matchExpressions: [{ key: RUN_LABEL, operator: 'In', values: [run] }] }] });

/** The maintenance's workflow status (a query: what the bridge writes next). */
async function query(name: string): Promise<MaintenanceStatus> {
  const id = await waitFor(`${name}: its workflow`, async () => (await nm.get(name))?.status?.workflowId);
  return f.client.workflow.getHandle(id).query(maintenanceStatusQuery);
}

const phaseOf = (s: MaintenanceStatus | NodeMaintenanceObject['status'], node: string) => s?.nodeStatuses?.find((n) => n.nodeRef.name === node);

async function queryWhen(name: string, what: string, ok: (s: MaintenanceStatus) => boolean, timeoutMs = 90_000): Promise<MaintenanceStatus> {
  return waitFor(`${name}: ${what}`, async () => {
    const s = await query(name);
    return ok(s) ? s : undefined;
  }, { timeoutMs, intervalMs: 200 });
}

/** The object once the bridge has written this. */
async function objectWhen(name: string, what: string, ok: (o: NodeMaintenanceObject) => boolean, timeoutMs = 60_000): Promise<NodeMaintenanceObject> {
  return waitFor(`${name}: ${what}`, async () => {
    const o = await nm.get(name);
    return o && ok(o) ? o : undefined;
  }, { timeoutMs, intervalMs: 250 });
}

const drained = (o: NodeMaintenanceObject) => o.status?.conditions?.some((c) => c.type === 'Drained' && c.status === 'True') ?? false;

/** Drives the rollout until every node is Done: `work` is called once for each node as soon as it is AwaitingWork. */
async function driveToDone(name: string, nodes: string[], work: (node: string) => Promise<void>, timeoutMs: number): Promise<void> {
  const worked = new Set<string>();
  await waitFor(`${name}: every node Done`, async () => {
    const s = await query(name);
    for (const n of nodes) {
      if (phaseOf(s, n)?.phase !== 'AwaitingWork' || worked.has(n)) continue;
      worked.add(n);
      await work(n);
    }
    return nodes.every((n) => phaseOf(s, n)?.phase === 'Done');
  }, { timeoutMs, intervalMs: 200 });
}

let rolled: { name: string; nodes: string[]; boots: Map<string, string> } | undefined;

test('#27 stack.1 12 nodes in 3 zones, maxUnavailable 2, partitionBy zone, completion by reboot: never more than 2 cordoned, zones a, b, c in order, every node Done and uncordoned, Drained', async () => {
  const run = uniqueName('it-roll');
  const nodes = await fleet(run, ['a', 'b', 'c'], 4);
  const cordons = await watchCordons(run);
  const name = run;
  const started = Date.now();
  await nm.create(name, { stage: 'Drain', nodeSelector: selectRun(run), rollout: { maxUnavailable: 2, partitionBy: ZONE, completion: { reboot: true } } });
  const boots = new Map<string, string>();
  await driveToDone(name, nodes, async (n) => {
    boots.set(n, await bootOf(n) ?? '');
    await reboot(n);
  }, 360_000);
  const o = await objectWhen(name, 'Drained and 12 done in status.rollout', (x) => drained(x) && x.status?.rollout?.done === 12);
  const ms = Date.now() - started;

  // At most 2 at once, and 2 were (maxUnavailable is used, not 1).
  expect(cordons.peak()).toBe(2);
  // Each node cordoned once and uncordoned once: no node started twice, nothing left cordoned.
  for (const n of nodes) expect(cordons.log.filter((e) => e.node === n).map((e) => e.cordoned)).toEqual([true, false]);
  expect(cordons.now()).toEqual(new Set());
  // Zones in order: every node of a zone uncordoned before the first of the next is cordoned.
  const zoneOf = (n: string) => n.slice(run.length + 1, run.length + 2);
  const firstCordon = (z: string) => cordons.log.findIndex((e) => e.cordoned && zoneOf(e.node) === z);
  const lastUncordon = (z: string) => Math.max(...cordons.log.map((e, i) => (!e.cordoned && zoneOf(e.node) === z ? i : -1)));
  expect(lastUncordon('a')).toBeLessThan(firstCordon('b'));
  expect(lastUncordon('b')).toBeLessThan(firstCordon('c'));
  // Every node cordoned, once (nodes started together are cordoned by their coordinators in either order).
  expect(cordons.log.filter((e) => e.cordoned).map((e) => e.node).sort()).toEqual([...nodes].sort());

  expect(o.status!.rollout).toMatchObject({ phase: 'Done', maxUnavailable: 2, partitions: ['a', 'b', 'c'], waiting: 0, inProgress: 0, done: 12, failed: 0 });
  for (const n of nodes) expect(phaseOf(o.status, n)).toMatchObject({ phase: 'Done', bootID: boots.get(n) });
  // The bootIDs recorded are the ones from before the reboot.
  expect(nodes.map((n) => boots.get(n))).toEqual(nodes.map((n) => `${n}-boot-1`));
  for (const n of nodes) expect((await f.c.core.readNode({ name: n })).spec?.unschedulable).toBeFalsy();
  rolled = { name, nodes, boots };
  console.log(`#27 stack.1: 12 nodes rolled in ${ms} ms`);
}, 480_000);

test('#27 stack.5 kubectl describe reads each node\'s phase, phase times and recorded bootID, and a Normal NodeDone Event per node', async () => {
  expect(rolled).toBeDefined();
  const { name, nodes, boots } = rolled!;
  const o = (await nm.get(name))!;
  for (const n of nodes) {
    const ns = phaseOf(o.status, n)!;
    expect(ns.phase).toBe('Done');
    expect(ns.bootID).toBe(boots.get(n));
    const phases = (ns.phaseTimes ?? []).map((t) => t.phase);
    expect(phases).toEqual(expect.arrayContaining(['Cordoned', 'AwaitingWork', 'Verifying', 'Done']));
    const times = (ns.phaseTimes ?? []).map((t) => Date.parse(t.time));
    expect(times.every((t) => !Number.isNaN(t))).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  }
  const done = await waitFor(`${name}: 12 NodeDone Events`, async () => {
    const e = (await nm.events(name)).filter((x) => x.reason === 'NodeDone');
    return e.length >= nodes.length ? e : undefined;
  }, { timeoutMs: 30_000 });
  expect(done.map((e) => e.type)).toEqual(nodes.map(() => 'Normal'));
  expect(done.map((e) => e.message).sort()).toEqual(nodes.map((n) => `node ${n} done: its work is complete and verified; released`).sort());
}, 60_000);

test('#27 stack.2 completion by annotation and by the CLI; the CLI refuses done for a node not AwaitingWork (one line, exit 1)', async () => {
  const run = uniqueName('it-roll-ann');
  const [n0, n1, n2] = (await fleet(run, ['a'], 3)) as [string, string, string];
  const cordons = await watchCordons(run);
  const name = run;
  await nm.create(name, { stage: 'Drain', nodeSelector: selectRun(run), rollout: { maxUnavailable: 1, completion: { annotation: true, manual: true } } });
  await queryWhen(name, `${n0} AwaitingWork`, (s) => phaseOf(s, n0)?.phase === 'AwaitingWork');
  // n2 is Waiting: done is refused, in one line.
  const refused = await cli(['maintenance', name, 'done', n2]);
  expectOneLineError(refused, `node ${n2} is Waiting, not AwaitingWork`);
  await f.c.core.patchNode({ name: n0, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch);
  const s1 = await queryWhen(name, `${n1} AwaitingWork`, (s) => phaseOf(s, n1)?.phase === 'AwaitingWork');
  expect(phaseOf(s1, n0)).toMatchObject({ phase: 'Done', message: 'work done (annotation)' });
  const ok = await cli(['maintenance', name, 'done', n1]);
  expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: '' });
  expect(ok.stdout).toContain(`maintenance ${name}: node ${n1} Verifying`);
  const s2 = await queryWhen(name, `${n2} AwaitingWork`, (s) => phaseOf(s, n2)?.phase === 'AwaitingWork');
  expect(phaseOf(s2, n1)?.phase).toBe('Done');
  expect(phaseOf(s2, n1)?.message).toMatch(/^work done \(manual, by .+\)$/);
  // Done twice is refused: the node is no longer AwaitingWork.
  expectOneLineError(await cli(['maintenance', name, 'done', n1]), `node ${n1} is Done, not AwaitingWork`);
  await f.c.core.patchNode({ name: n2, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch);
  await objectWhen(name, 'Drained', (o) => drained(o) && o.status?.rollout?.done === 3);
  expect(cordons.peak()).toBe(1);
  for (const n of [n0, n1, n2]) expect(cordons.log.filter((e) => e.node === n).map((e) => e.cordoned)).toEqual([true, false]);
}, 240_000);

test('#27 stack.3 pause and resume through the CLI: paused takes no new node (phase Paused, Waiting nodes say so), resume goes on', async () => {
  const run = uniqueName('it-roll-pause');
  const [n0, n1, n2] = (await fleet(run, ['a'], 3)) as [string, string, string];
  const cordons = await watchCordons(run);
  const name = run;
  await nm.create(name, { stage: 'Drain', nodeSelector: selectRun(run), rollout: { maxUnavailable: 1, completion: { manual: true } } });
  await queryWhen(name, `${n0} AwaitingWork`, (s) => phaseOf(s, n0)?.phase === 'AwaitingWork');
  const paused = await cli(['maintenance', name, 'pause']);
  expect({ code: paused.code, stderr: paused.stderr }).toEqual({ code: 0, stderr: '' });
  expect(paused.stdout).toContain(`maintenance ${name}: rollout Paused`);
  // The node in progress goes on: its work done, it is released, and no other node is taken.
  expect((await cli(['maintenance', name, 'done', n0])).code).toBe(0);
  const o = await objectWhen(name, `Paused in status.rollout with ${n0} Done`, (x) => x.status?.rollout?.phase === 'Paused' && phaseOf(x.status, n0)?.phase === 'Done');
  expect(o.status!.rollout).toMatchObject({ phase: 'Paused', done: 1, inProgress: 0, waiting: 2 });
  expect(o.status!.rollout!.message).toMatch(/; paused by .+$/);
  for (const n of [n1, n2]) expect(phaseOf(o.status, n)).toMatchObject({ phase: 'Waiting', waitingFor: 'paused' });
  // Still paused on the workflow's own account, and the apiserver saw no other node cordoned.
  const s = await query(name);
  expect(s.rollout?.phase).toBe('Paused');
  expect(cordons.log.filter((e) => e.cordoned).map((e) => e.node)).toEqual([n0]);
  expect(cordons.now()).toEqual(new Set());

  const resumed = await cli(['maintenance', name, 'resume']);
  expect(resumed.code).toBe(0);
  expect(resumed.stdout).toContain(`maintenance ${name}: rollout Running`);
  await driveToDone(name, [n1, n2], async (n) => {
    expect((await cli(['maintenance', name, 'done', n])).code).toBe(0);
  }, 120_000);
  await objectWhen(name, 'Drained', (x) => drained(x) && x.status?.rollout?.phase === 'Done');
  expect(cordons.log.filter((e) => e.cordoned).map((e) => e.node)).toEqual([n0, n1, n2]);
  expect(cordons.peak()).toBe(1);
}, 240_000);

test('#27 stack.4 a NodeDisruptionBudget of 1 under maxUnavailable 3: never more than 1 cordoned (the budget wins), every node finishes', async () => {
  const run = uniqueName('it-roll-nsb');
  const nodes = await fleet(run, ['a'], 3);
  const cordons = await watchCordons(run);
  const budget = run;
  budgetNames.push(budget);
  await custom.createClusterCustomObject({ ...budgets, body: { apiVersion: `${GROUP}/${VERSION}`, kind: NODE_DISRUPTION_BUDGET.kind, metadata: { name: budget }, spec: { nodeSelector: { matchLabels: { [RUN_LABEL]: run } }, maxDisrupted: 1 } } });
  const name = run;
  await nm.create(name, { stage: 'Drain', nodeSelector: selectRun(run), rollout: { maxUnavailable: 3, completion: { annotation: true } } });
  // All three started; two wait for the budget, and say so.
  const s = await queryWhen(name, 'two nodes waiting for the budget', (x) => x.nodeStatuses.filter((n) => n.phase === 'Waiting' && n.waitingFor?.includes(`NodeDisruptionBudget ${budget}`)).length === 2);
  expect(s.rollout).toMatchObject({ maxUnavailable: 3, inProgress: 3 });
  await driveToDone(name, nodes, async (n) => {
    await f.c.core.patchNode({ name: n, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch);
  }, 180_000);
  await objectWhen(name, 'Drained', (o) => drained(o) && o.status?.rollout?.done === 3);
  expect(cordons.peak()).toBe(1);
  for (const n of nodes) expect(cordons.log.filter((e) => e.node === n).map((e) => e.cordoned)).toEqual([true, false]);
}, 240_000);
