// `npm run demo:maintenance`: two intersecting NodeMaintenances on kwok nodes, end to end. A worker
// and the CRD bridge run in this process; the maintenances are applied as objects (the bridge starts
// their workflows), one is advanced through the CLI's setStage update, the other by editing
// spec.stage, and a PDB holds one pod until the demo relaxes it. Progress is printed as it changes.
import { AppsV1Api, CustomObjectsApi, PolicyV1Api, SchedulingV1Api } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { GROUP, VERSION } from '../api/crd.js';
import { NODE_MAINTENANCE } from '../api/node-maintenance.js';
import { apiStatus, createKube } from '../kube/client.js';
import { createReadyNamespace } from './namespace.js';
import { ensureNode, fakeNode } from '../activities/providers/kwok-node.js';
import { temporalSettings, webUiLink } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../workflows/ids.js';
import { maintenanceStatusQuery } from '../workflows/messages.js';
import { startBridge } from './bridge/main.js';
import { setStage } from './cli/maintenance.js';
import { renderMaintenance } from './cli/maintenance-render.js';
import { Session } from './cli/session.js';
import { connectClient } from './client.js';
import { installCrds } from './install-crds.js';
import { mergePatch } from '../kube/patch.js';
import { API_VERSION } from '../api/names.js';

Runtime.install({ logger: new DefaultLogger('WARN') });
const settings = temporalSettings();
const kube = createKube();
const custom = kube.config.makeApiClient(CustomObjectsApi);
const apps = kube.config.makeApiClient(AppsV1Api);
const run = Date.now().toString(36);
const ns = `slipway-nm-demo-${run}`;
const nodes = ['one', 'two', 'three'].map((n) => `nm-demo-${run}-${n}`);
const [one, two, three] = nodes as [string, string, string];
const ignoreConflict = (err: unknown) => {
  if (apiStatus(err) !== 409) throw err;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await installCrds(kube.config);
for (const name of nodes) await ensureNode(kube.core, fakeNode({ name, nodeGroup: `nm-demo-${run}` }));
await createReadyNamespace(kube.core, ns);

// Pods pinned to nodes, with the priorities of the spec's example E2.
const scheduling = kube.config.makeApiClient(SchedulingV1Api);
const pods: Array<[string, string, number]> = [['p1', one, 4000], ['p2', one, 8000], ['q1', two, 5000], ['r1', three, 9000], ['r2', three, 11000]];
for (const [name, node, value] of pods) {
  const priorityClassName = `nm-demo-${run}-${value}`;
  await scheduling.createPriorityClass({ body: { metadata: { name: priorityClassName }, value } }).catch(ignoreConflict);
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { nodeSelector: { 'kubernetes.io/hostname': node }, priorityClassName, terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
        },
      },
    },
  });
}
const policy = kube.config.makeApiClient(PolicyV1Api);
await policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: { metadata: { name: 'q1' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'q1' } } } } });
console.log(`nodes ${nodes.join(', ')}; namespace ${ns}: p1 p2 on one, q1 on two (PDB maxUnavailable 0), r1 r2 on three`);

const { worker, connection } = await createWorker({ deps: { kube }, settings });
const running = worker.run();
const client = await connectClient(settings);
const bridge = await startBridge({ kube, client, settings });

const where = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural };
const D = (podPriority: number) => ({ podType: 'Default', podPriority });
const byName = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: names }] }] });
const a = `nm-demo-${run}-a`;
const b = `nm-demo-${run}-b`;
const uids: Record<string, string> = {};
for (const [name, sel, plan] of [[a, byName(one, two), [D(5000), D(15000)]], [b, byName(one, three), [D(10000), D(15000)]]] as const) {
  const o = (await custom.createClusterCustomObject({ ...where, body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec: { nodeSelector: sel, drainPlan: plan, reason: 'demo: kernel upgrade' } } })) as { metadata: { uid: string } };
  uids[name] = o.metadata.uid;
  console.log(`applied NodeMaintenance ${name} (Idle; kubectl get snm)`);
}
const ids = { [a]: maintenanceWorkflowId({ name: a, uid: uids[a]! }), [b]: maintenanceWorkflowId({ name: b, uid: uids[b]! }) };

// Prints each maintenance's status whenever it changes.
const last = new Map<string, string>();
async function show(): Promise<Record<string, { drained: boolean; completed: boolean }>> {
  const out: Record<string, { drained: boolean; completed: boolean }> = {};
  for (const [name, id] of Object.entries(ids)) {
    const s = await client.workflow.getHandle(id).query(maintenanceStatusQuery).catch(() => undefined);
    if (!s) continue;
    const text = renderMaintenance(s);
    if (last.get(name) !== text) console.log(`\n── ${name}\n${text}`);
    last.set(name, text);
    out[name] = { drained: s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), completed: s.completed };
  }
  return out;
}
const until = async (ok: (s: Record<string, { drained: boolean; completed: boolean }>) => boolean, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(1000)) if (ok(await show())) return true;
  return false;
};
await until((s) => Object.keys(s).length === 2, 30_000);

// a: through the CLI (the setStage update); b: by editing spec.stage (the bridge sends specChanged).
const io = { out: (l: string) => console.log(`$ npm run cli -- maintenance ${a} stage Drain\n${l}`), err: (l: string) => console.error(l) };
await setStage(new Session(settings), { name: a, stage: 'Drain', reason: 'demo' }, io);
await custom.patchClusterCustomObject({ ...where, name: b, body: { spec: { stage: 'Drain' } } }, mergePatch);
console.log(`$ kubectl patch snm ${b} --type merge -p '{"spec":{"stage":"Drain"}}'`);

await until(() => false, 20_000); // q1's PDB holds a; b waits for a on node one
console.log('\nrelaxing the PDB of q1 …');
await policy.deleteNamespacedPodDisruptionBudget({ name: 'q1', namespace: ns });
const drained = await until((s) => !!s[a]?.drained && !!s[b]?.drained, 120_000);

for (const name of [a, b]) await setStage(new Session(settings), { name, stage: 'Complete' }, { out: (l) => console.log(l), err: (l) => console.error(l) });
await until((s) => !!s[a]?.completed && !!s[b]?.completed, 60_000);
console.log(`\nTemporal Web UI:\n  ${webUiLink(ids[a]!)}\n  ${webUiLink(ids[b]!)}`);
for (const n of nodes) console.log(`  ${webUiLink(maintenanceNodeWorkflowId(n))}`);

// Leave the stack as it was: objects, pods, nodes and priority classes of this demo go.
for (const name of [a, b]) await custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined);
// The bridge drops the finalizer of a completed maintenance at once (NM-2.13).
for (const end = Date.now() + 15_000; Date.now() < end; await sleep(500)) {
  const left = await Promise.all([a, b].map((name) => custom.getClusterCustomObject({ ...where, name }).then(() => true, () => false)));
  if (!left.some(Boolean)) break;
}
await kube.core.deleteNamespace({ name: ns }).catch(() => undefined);
for (const n of nodes) await kube.core.deleteNode({ name: n }).catch(() => undefined);
for (const [, , value] of pods) await scheduling.deletePriorityClass({ name: `nm-demo-${run}-${value}` }).catch(() => undefined);
await bridge.stop();
worker.shutdown();
await running;
await client.connection.close();
await connection.close();
process.exitCode = drained ? 0 : 1;
