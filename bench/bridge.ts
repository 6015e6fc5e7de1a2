// Bridge lag: CycleNodeRequest created → its workflow running, and workflow state change → status
// updated (p50 / p99 over many samples). The bridge runs in this process as in production; the
// workflow is the scripted stand-in from the tests (a real workflow whose phases a signal sets), so
// every state change has an exact moment.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { CYCLE_NODE_REQUEST } from '../api/cycle-node-request.js';
import { createKube } from '../kube/client.js';
import { startBridge } from '../starter/bridge/main.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { cycleWorkflowId, type CycleStatus } from '../workflows/cycle/types.js';
import { mergePatch } from '../kube/patch.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { API_VERSION } from '../api/names.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}
const REQUESTS = Number(process.env.SLIPWAY_BENCH_REQUESTS ?? 30);
const PHASES = ['Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination'] as const;

const kube = createKube();
const custom = kube.config.makeApiClient(CustomObjectsApi);
const ns = `bench-bridge-${Date.now().toString(36)}`;
await kube.core.createNamespace({ body: { metadata: { name: ns } } });
const settings = { ...temporalSettings(), taskQueue: ns };
const client = await connectClient(settings);
const connection = await NativeConnection.connect(settings.connection);
const scripted = fileURLToPath(new URL('../../test/support/workflows/scripted-cycle.ts', import.meta.url));
const worker = await Worker.create({ connection, namespace: settings.namespace, taskQueue: ns, workflowsPath: scripted });
const running = worker.run();
// Requests only: NodeMaintenances are cluster-wide, and this bridge's queue is private.
const bridge = await startBridge({ kube, client, settings, taskQueue: ns, namespace: ns, leaseNamespace: ns, maintenances: false, log: () => undefined });
const { group, version, plural, kind } = CYCLE_NODE_REQUEST;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const startLag: number[] = [];
const statusLag: number[] = [];

for (let i = 0; i < REQUESTS; i++) {
  const name = `r${i}`;
  const t0 = performance.now();
  const obj = (await custom.createNamespacedCustomObject({
    group, version, plural, namespace: ns,
    body: { apiVersion: API_VERSION, kind, metadata: { name }, spec: { nodeGroupName: 'g', selector: { matchLabels: { [NODE_GROUP_LABEL]: 'g' } } } },
  })) as { metadata: { uid: string } };
  const handle = client.workflow.getHandle(cycleWorkflowId({ namespace: ns, name, uid: obj.metadata.uid }));
  for (;;) {
    const d = await handle.describe().catch(() => undefined);
    if (d?.status.name === 'RUNNING') break;
    await new Promise((r) => setTimeout(r, 10));
  }
  startLag.push(performance.now() - t0);

  for (const phase of PHASES) {
    const status: CycleStatus = { phase, message: `bench ${phase}`, nodes: [], nodesCycled: 0, nodesTotal: 0 };
    const t1 = performance.now();
    await handle.signal('scriptStatus', status);
    for (;;) {
      const o = (await custom.getNamespacedCustomObject({ group, version, plural, namespace: ns, name })) as { status?: { phase?: string } };
      if (o.status?.phase === phase) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    statusLag.push(performance.now() - t1);
  }
  await handle.signal('scriptFinish', {});
}

console.log(`\n## Bridge lag (${REQUESTS} requests, ${statusLag.length} state changes; the bridge polls running workflows every 500 ms)`);
console.log(`CR created → workflow running: p50 ${pct(startLag, 50).toFixed(0)} ms, p99 ${pct(startLag, 99).toFixed(0)} ms (target p99 ≤ 1 s)`);
console.log(`state change → status updated: p50 ${pct(statusLag, 50).toFixed(0)} ms, p99 ${pct(statusLag, 99).toFixed(0)} ms (target p99 ≤ 1 s)`);

await bridge.stop();
worker.shutdown();
await running;
await connection.close();
for (let i = 0; i < REQUESTS; i++) {
  await custom.patchNamespacedCustomObject({ group, version, plural, namespace: ns, name: `r${i}`, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
}
await kube.core.deleteNamespace({ name: ns });
await client.connection.close();
