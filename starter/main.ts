// The main job on the embedded default (npm start brings the local stack up first): install the
// CRDs, make sure a node group of kwok nodes runs a sample app with a PDB, run a worker and the CRD
// bridge in this process, apply a CycleNodeRequest, and follow it until it is done.
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { apiStatus, createKube } from '../kube/client.js';
import { createReadyNamespace } from './namespace.js';
import { ensureNode, fakeNode } from '../activities/providers/kwok-node.js';
import { temporalSettings, webUiLink } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { startBridge } from './bridge/main.js';
import { connectClient } from './client.js';
import { createCycle, followCycle } from './cycle-cli.js';
import { installCrds } from './install-crds.js';
import { cycleWorkflowId } from '../workflows/ids.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';

// Keep the terminal for the job's own output.
Runtime.install({ logger: new DefaultLogger('WARN') });
const settings = temporalSettings();
const kube = createKube();
const group = process.env.SLIPWAY_DEMO_GROUP ?? 'workers';
const size = Number(process.env.SLIPWAY_DEMO_NODES ?? 4);
const ns = 'slipway-demo';
const ignoreConflict = (err: unknown) => {
  if (apiStatus(err) !== 409) throw err;
};

await installCrds(kube.config);

// A node group of `size` kwok nodes (earlier runs replaced some: only fill up what is missing).
const have = (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items.length;
for (let i = 0; i < size - have; i++) await ensureNode(kube.core, fakeNode({ name: `${group}-${Date.now().toString(36)}-${i}`, nodeGroup: group }));

// A sample app spread over the group, with a PDB the cycle must respect.
await createReadyNamespace(kube.core, ns);
await kube.config.makeApiClient(AppsV1Api).createNamespacedDeployment({
  namespace: ns,
  body: {
    metadata: { name: 'web' },
    spec: {
      replicas: size * 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          nodeSelector: { [NODE_GROUP_LABEL]: group },
          terminationGracePeriodSeconds: 3,
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
          containers: [{ name: 'web', image: 'registry.invalid/web:1' }],
        },
      },
    },
  },
}).catch(ignoreConflict);
await kube.config.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
  namespace: ns,
  body: { metadata: { name: 'web' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } },
}).catch(ignoreConflict);
console.log(`node group ${group}: ${size} kwok nodes; app ${ns}/web (${size * 2} replicas, PDB maxUnavailable 1)`);

const { worker, connection } = await createWorker({ deps: { kube }, settings });
const running = worker.run();
const client = await connectClient(settings);
const bridge = await startBridge({ kube, client, settings });

const name = `cycle-${group}-${Date.now().toString(36)}`;
const { uid } = await createCycle(kube, { namespace: ns, name, nodeGroup: group, concurrency: 2 });
console.log(`applied CycleNodeRequest ${ns}/${name} (kubectl get cnr -n ${ns}); following it:`);
const code = await followCycle(client, { namespace: ns, name, uid });
console.log(`\nTemporal Web UI: ${webUiLink(cycleWorkflowId({ namespace: ns, name, uid }))}`);

await bridge.stop();
worker.shutdown();
await running;
await client.connection.close();
await connection.close();
process.exitCode = code;
