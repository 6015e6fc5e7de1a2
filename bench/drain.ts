// Drain benchmarks on the local stack. Prints figures; asserts nothing (targets are in the issue):
//   1. one wave of 100 pods: Slipway's time / kubectl drain's, same stack, same run; overhead over the grace period
//   2. three ordered waves: overhead per wave
//   3. Kubernetes API requests per evicted pod (apiserver metrics)
import { execFileSync } from 'node:child_process';
import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createKube, type Kube } from '../kube/client.js';
import { createReadyNamespace } from '../starter/namespace.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { drainWorkflow } from '../workflows/index.js';
import { delta, drainRequests, scrapeRequests } from './metrics.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { API_VERSION, DRAIN_RULE } from '../api/names.js';

const GRACE_S = 5;
const PODS = 100;
const WAVE_PODS = 10;
const WAVE_GRACE_S = 2;
const ROUNDS = Number(process.env.SLIPWAY_BENCH_ROUNDS ?? 2);

Runtime.install({ logger: new DefaultLogger('WARN') });
const kube = createKube();
const apps = kube.config.makeApiClient(AppsV1Api);
const rules = kube.config.makeApiClient(CustomObjectsApi);
const id = Date.now().toString(36);
const group = `bench-${id}`;
const ns = group;

async function podsOn(node: string): Promise<number> {
  const l = await kube.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  return l.items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).length;
}

/** A Deployment pinned to one node (its replacements stay Pending, which keeps the stack light). */
async function fill(node: string, name: string, replicas: number, grace: number, labels: Record<string, string> = {}) {
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name, ...labels } },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': node },
            terminationGracePeriodSeconds: grace,
            containers: [{ name: 'c', image: 'registry.invalid/bench:1' }],
          },
        },
      },
    },
  });
}

async function waitPods(node: string, n: number) {
  const deadline = Date.now() + 180_000;
  while ((await podsOn(node)) < n) {
    if (Date.now() > deadline) throw new Error(`${node}: ${n} pods not Running in time`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function kubectlDrain(node: string): number {
  const t = performance.now();
  execFileSync('kubectl', ['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--timeout=600s'], { stdio: 'ignore' });
  return (performance.now() - t) / 1000;
}

async function main(kubeClient: Kube) {
  const nodes = await ensureFakeNodeGroup(kubeClient.core, group, 2 * ROUNDS + 1);
  await createReadyNamespace(kubeClient.core, ns);
  const settings = { ...temporalSettings(), taskQueue: group };
  const { worker } = await createWorker({ deps: { kube: kubeClient }, settings, prebuiltBundle: true });
  const running = worker.run();
  const client = await connectClient(settings);
  const slipwayDrain = async (node: string) => {
    const t = performance.now();
    const r = await client.workflow.execute(drainWorkflow, { taskQueue: group, workflowId: `${group}-${node}`, args: [{ nodeName: node }] });
    return { seconds: (performance.now() - t) / 1000, evicted: r.status.evicted };
  };

  // Warm both paths once (webpack bundle, kubectl discovery cache) on a tiny node? The first
  // Slipway drain already runs on a started worker; kubectl's cache is warmed by `kubectl version`.
  execFileSync('kubectl', ['version'], { stdio: 'ignore' });

  console.log(`\n## One wave: ${PODS} pods, terminationGracePeriodSeconds ${GRACE_S}, ${ROUNDS} rounds`);
  const ratios: number[] = [];
  let requestsPerPod = 0;
  let requestSeries: Array<[string, number]> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [a, b] = [nodes[2 * r]!, nodes[2 * r + 1]!];
    await fill(a, `kubectl-${r}`, PODS, GRACE_S);
    await fill(b, `slipway-${r}`, PODS, GRACE_S);
    await Promise.all([waitPods(a, PODS), waitPods(b, PODS)]);
    const k = kubectlDrain(a);
    const before = scrapeRequests();
    const s = await slipwayDrain(b);
    await new Promise((res) => setTimeout(res, 1000)); // let closed watches be counted
    const req = drainRequests(delta(before, scrapeRequests()));
    requestsPerPod = req.total / s.evicted;
    requestSeries = req.series;
    ratios.push(s.seconds / k);
    console.log(
      `round ${r + 1}: kubectl drain ${k.toFixed(2)} s | Slipway ${s.seconds.toFixed(2)} s (${s.evicted} evicted) | ratio ${(s.seconds / k).toFixed(3)} | Slipway overhead over the grace period ${(s.seconds - GRACE_S).toFixed(2)} s`,
    );
  }
  ratios.sort((x, y) => x - y);
  const median = ratios[Math.floor(ratios.length / 2)]!;

  console.log(`\n## Three ordered waves: ${WAVE_PODS} pods each, grace ${WAVE_GRACE_S} s`);
  const node = nodes[2 * ROUNDS]!;
  const ruleNames = [`${group}-first`, `${group}-last`];
  const nodeSel = [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: group } } }];
  await rules.createClusterCustomObject({ ...DRAIN_RULE, body: { apiVersion: API_VERSION, kind: DRAIN_RULE.kind, metadata: { name: ruleNames[0] }, spec: { drain: { behavior: 'Drain', order: -1 }, nodes: nodeSel, pods: [{ selector: { matchLabels: { wave: 'first' } } }] } } });
  await rules.createClusterCustomObject({ ...DRAIN_RULE, body: { apiVersion: API_VERSION, kind: DRAIN_RULE.kind, metadata: { name: ruleNames[1] }, spec: { drain: { behavior: 'Drain', order: 1 }, nodes: nodeSel, pods: [{ selector: { matchLabels: { wave: 'last' } } }] } } });
  await fill(node, 'wave-first', WAVE_PODS, WAVE_GRACE_S, { wave: 'first' });
  await fill(node, 'wave-middle', WAVE_PODS, WAVE_GRACE_S);
  await fill(node, 'wave-last', WAVE_PODS, WAVE_GRACE_S, { wave: 'last' });
  await waitPods(node, 3 * WAVE_PODS);
  const w = await slipwayDrain(node);
  const perWave = (w.seconds - 3 * WAVE_GRACE_S) / 3;
  console.log(`3 waves: ${w.seconds.toFixed(2)} s for ${w.evicted} pods; ideal ${3 * WAVE_GRACE_S} s (3 × grace); overhead per wave ${perWave.toFixed(3)} s (a pod's grace deadline is stored to the whole second, so a wave can end up to 1 s early: values below 0 are within that resolution)`);

  console.log(`\n## API requests per evicted pod (apiserver_request_total, last one-wave Slipway drain)`);
  for (const [k, v] of requestSeries) console.log(`  ${k.padEnd(40)} ${v}`);
  console.log(`  = ${requestsPerPod.toFixed(2)} requests per evicted pod`);

  console.log('\n## Summary');
  console.log('| figure | value | target |\n|---|---|---|');
  console.log(`| ratio to kubectl drain (median of ${ROUNDS}) | ${median.toFixed(3)} | ≤ 1.0 |`);
  console.log(`| overhead per wave | ${perWave.toFixed(3)} s | ≤ 0.5 s |`);
  console.log(`| API requests per evicted pod | ${requestsPerPod.toFixed(2)} | ≤ 3 |`);

  for (const name of ruleNames) await rules.deleteClusterCustomObject({ ...DRAIN_RULE, name });
  await kubeClient.core.deleteNamespace({ name: ns });
  for (const n of nodes) await kubeClient.core.deleteNode({ name: n });
  worker.shutdown();
  await running;
  await client.connection.close();
}

await main(kube);
