// `npm run demo:rollout`: a rolling NodeMaintenance (spec.rollout) live on kwok nodes. Six nodes in
// three zones, one pod each; maxUnavailable 2, one zone after another (partitionBy zone), completion by
// annotation. A worker and the CRD bridge run in this process; the demo plays the operator (it applies
// the object, moves it to Drain by editing spec.stage, pauses and resumes the rollout with the CLI's
// updates, sets Complete) and the admin's tooling (it reads the object's status and, a moment after a
// node is AwaitingWork, "upgrades its kernel" and annotates it maintenance.slipway.dev/done: <name>).
// Each node's phase is printed as the object's status shows it.
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { GROUP, VERSION } from '../api/crd.js';
import { NODE_MAINTENANCE, type NodeMaintenanceStatus } from '../api/node-maintenance.js';
import { ROLLOUT_DONE_ANNOTATION } from '../api/rollout.js';
import { API_VERSION } from '../api/names.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { createKube } from '../kube/client.js';
import { mergePatch } from '../kube/patch.js';
import { ensureNode, fakeNode } from '../activities/providers/kwok-node.js';
import { temporalSettings, webUiLink } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { maintenanceWorkflowId } from '../workflows/ids.js';
import { startBridge } from './bridge/main.js';
import { setRolloutPaused, setStage } from './cli/maintenance.js';
import { Session } from './cli/session.js';
import { connectClient } from './client.js';
import { createReadyNamespace } from './namespace.js';
import { installCrds } from './install-crds.js';

Runtime.install({ logger: new DefaultLogger('WARN') });
const settings = temporalSettings();
const kube = createKube();
const custom = kube.config.makeApiClient(CustomObjectsApi);
const apps = kube.config.makeApiClient(AppsV1Api);
const run = Date.now().toString(36);
const group = `rollout-demo-${run}`;
const ns = group;
const name = `kernel-${run}`;
const ZONES = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];
const nodes = ZONES.flatMap((zone, z) => [1, 2].map((i) => ({ name: `${group}-${'abc'[z]}${i}`, zone })));
const short = (node: string) => node.slice(group.length + 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const stamp = () => `${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s`;
const say = (line: string) => console.log(`${stamp()}  ${line}`);
const io = { out: (l: string) => say(l), err: (l: string) => console.error(l) };

await installCrds(kube.config);
for (const n of nodes) await ensureNode(kube.core, fakeNode({ name: n.name, nodeGroup: group, zone: n.zone }));
await createReadyNamespace(kube.core, ns);
for (const n of nodes) {
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name: short(n.name) },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: short(n.name) } },
        template: {
          metadata: { labels: { app: short(n.name) } },
          spec: { nodeSelector: { 'kubernetes.io/hostname': n.name }, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
        },
      },
    },
  });
}
say(`nodes (zone): ${nodes.map((n) => `${short(n.name)} (${n.zone})`).join(', ')}; one pod each in namespace ${ns}`);

const { worker, connection } = await createWorker({ deps: { kube }, settings });
const running = worker.run();
const client = await connectClient(settings);
const bridge = await startBridge({ kube, client, settings });

const where = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural };
const spec = {
  nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: [group] }] }] },
  reason: 'demo: rolling kernel upgrade',
  rollout: { maxUnavailable: 2, partitionBy: 'topology.kubernetes.io/zone', completion: { annotation: true } },
};
const created = (await custom.createClusterCustomObject({ ...where, body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec } })) as { metadata: { uid: string } };
const id = maintenanceWorkflowId({ name, uid: created.metadata.uid });
say(`applied NodeMaintenance ${name}: rollout maxUnavailable 2, partitionBy topology.kubernetes.io/zone, completion by annotation (stage Idle)`);

type Obj = { spec: { stage?: string }; status?: NodeMaintenanceStatus };
const read = async () => (await custom.getClusterCustomObject({ ...where, name })) as Obj;
/** What `kubectl get snm` prints for it. */
const columns = (o: Obj) => {
  const s = o.status;
  const drained = s?.conditions?.find((c) => c.type === 'Drained')?.status ?? '';
  return `kubectl get snm: STAGE ${o.spec.stage ?? 'Idle'}  DRAINED ${drained}  NODES ${s?.selectedNodes ?? ''}  DONE ${s?.rollout?.done ?? ''}  FAILED ${s?.rollout?.failed ?? ''}`;
};

// Prints each node's phase, the rollout's line and the printer columns whenever they change; plays the admin's tooling.
const phases = new Map<string, string>();
let rolloutLine = '';
let columnsLine = '';
const marked = new Set<string>();
async function watchOnce(): Promise<Obj | undefined> {
  const o = await read().catch(() => undefined);
  if (!o?.status) return o;
  for (const ns of o.status.nodeStatuses ?? []) {
    const node = ns.nodeRef.name;
    const phase = `${ns.phase ?? '-'}${ns.phase === 'Waiting' && ns.waitingFor ? ` (for ${ns.waitingFor})` : ''}${ns.phase === 'Done' && ns.message ? ` (${ns.message})` : ''}`;
    if (phases.get(node) !== phase) say(`  ${short(node).padEnd(3)} ${nodes.find((n) => n.name === node)?.zone}  ${phases.get(node) ?? ''}${phases.has(node) ? ' → ' : ''}${phase}`);
    phases.set(node, phase);
    if (ns.phase === 'AwaitingWork' && !marked.has(node)) {
      marked.add(node);
      // The admin's tooling: the node is drained; upgrade its kernel, reboot it, then say it is done.
      void sleep(2000).then(async () => {
        await kube.core.patchNode({ name: node, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch);
        say(`  $ kubectl annotate node ${short(node)} ${ROLLOUT_DONE_ANNOTATION}=${name}    # the tooling: kernel upgraded`);
      });
    }
  }
  const r = o.status.rollout;
  const line = r ? `rollout ${r.message ?? r.phase}` : '';
  if (line && line !== rolloutLine) say(line);
  rolloutLine = line;
  const cols = columns(o);
  if (cols !== columnsLine) say(cols);
  columnsLine = cols;
  return o;
}
async function until(ok: (o: Obj) => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(500)) {
    const o = await watchOnce();
    if (o && ok(o)) return true;
  }
  return false;
}
const done = (o: Obj) => o.status?.rollout?.done ?? 0;

await until((o) => (o.status?.nodeStatuses?.length ?? 0) === nodes.length, 30_000);
await custom.patchClusterCustomObject({ ...where, name, body: { spec: { stage: 'Drain' } } }, mergePatch);
say(`$ kubectl patch snm ${name} --type merge -p '{"spec":{"stage":"Drain"}}'`);

// Pause once the first node is Done, resume a few seconds later.
await until((o) => done(o) >= 1, 120_000);
say(`$ slipway maintenance ${name} pause`);
await setRolloutPaused(new Session(settings), { name, paused: true }, io);
await until(() => false, 5000);
say(`$ slipway maintenance ${name} resume`);
await setRolloutPaused(new Session(settings), { name, paused: false }, io);

const ok = await until((o) => o.status?.rollout?.phase === 'Done' && !!o.status.conditions?.some((c) => c.type === 'Drained' && c.status === 'True'), 300_000);
say(`$ slipway maintenance ${name} stage Complete`);
await setStage(new Session(settings), { name, stage: 'Complete' }, io);
await Promise.race([client.workflow.getHandle(id).result(), sleep(60_000)]); // Complete releases every node, then the workflow ends
await until(() => false, 3000); // the bridge mirrors the final status
for (const n of nodes) {
  const node = await kube.core.readNode({ name: n.name });
  say(`  ${short(n.name)}: ${node.spec?.unschedulable ? 'still cordoned' : 'schedulable'}`);
}
console.log(`\nTemporal Web UI: ${webUiLink(id)}`);

// Leave the stack as it was.
await custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined);
for (const end = Date.now() + 15_000; Date.now() < end; await sleep(500)) if (!(await read().then(() => true, () => false))) break;
await kube.core.deleteNamespace({ name: ns }).catch(() => undefined);
for (const n of nodes) await kube.core.deleteNode({ name: n.name }).catch(() => undefined);
await bridge.stop();
worker.shutdown();
await running;
await client.connection.close();
await connection.close();
process.exitCode = ok ? 0 : 1;
