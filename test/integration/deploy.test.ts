// deploy/ as a kustomize base (#15 §5): `kubectl kustomize deploy/` renders, the rendered objects
// say what the code expects (entry points that exist, the bounded-heap flags, probes on the probe
// port, the Temporal settings from the ConfigMap, every CRD), and the local apiserver accepts all of
// it in a server-side dry-run (schemas, RBAC, admission policies; nothing is written).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { CRDS } from '../../api/crds.js';
import { apiStatus } from '../../kube/client.js';
import { temporalSettings } from '../../shared/temporal.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { testCluster } from '../support/cluster.js';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}
interface Container {
  name: string;
  command: string[];
  env?: Array<{ name: string; value?: string }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean } }>;
  ports: Array<{ name: string; containerPort: number }>;
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  resources: { requests?: { cpu?: string; memory?: string }; limits?: { memory?: string } };
}
interface Deployment extends Obj {
  spec: { replicas: number; template: { spec: { serviceAccountName: string; containers: Container[] } } };
}

const SYSTEM_NS = 'slipway-system';
const rendered = execFileSync('kubectl', ['kustomize', 'deploy/'], { encoding: 'utf8' });
const docs = parseAllDocuments(rendered).map((d) => d.toJS() as Obj);
const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
const deployment = (name: string) => find('Deployment', name) as Deployment;

test('kubectl kustomize deploy/ renders every CRD, both service accounts and both Deployments', () => {
  for (const def of CRDS) expect(find('CustomResourceDefinition', `${def.plural}.slipway.dev`)).toBeDefined();
  expect(docs.filter((d) => d.kind === 'ValidatingAdmissionPolicy').length).toBeGreaterThan(0);
  for (const sa of ['slipway-worker', 'slipway-bridge']) expect(find('ServiceAccount', sa)?.metadata.namespace).toBe(SYSTEM_NS);
  expect(deployment('slipway-worker').spec.template.spec.serviceAccountName).toBe('slipway-worker');
  expect(deployment('slipway-bridge').spec.template.spec.serviceAccountName).toBe('slipway-bridge');
  expect(deployment('slipway-bridge').spec.replicas).toBe(2);
});

test.each([
  ['slipway-worker', 'dist/worker/main.js'],
  ['slipway-bridge', 'dist/starter/bridge/main.js'],
])('%s runs %s with the bounded heap, probes on SLIPWAY_PROBE_PORT, requests, and Temporal from the ConfigMap', (name, script) => {
  const [c] = deployment(name).spec.template.spec.containers;
  expect(c!.command).toEqual(['node', ...WORKER_NODE_FLAGS, script]);
  expect(existsSync(script.replace(/^dist\//, '').replace(/\.js$/, '.ts'))).toBe(true);
  const probePort = c!.env?.find((e) => e.name === 'SLIPWAY_PROBE_PORT')?.value;
  const named = c!.ports.find((p) => p.name === c!.readinessProbe.httpGet.port);
  expect(String(named?.containerPort)).toBe(probePort);
  expect([c!.readinessProbe.httpGet.path, c!.livenessProbe.httpGet.path]).toEqual(['/readyz', '/healthz']);
  expect(c!.livenessProbe.httpGet.port).toBe(c!.readinessProbe.httpGet.port);
  expect(c!.resources.requests?.cpu && c!.resources.requests?.memory && c!.resources.limits?.memory).toBeTruthy();
  // Every key of the ConfigMap is a setting the code reads: temporalSettings takes address and namespace from it.
  const cm = c!.envFrom?.find((e) => e.configMapRef)?.configMapRef?.name;
  const data = (find('ConfigMap', cm!) as unknown as { data: Record<string, string> }).data;
  const s = temporalSettings(data);
  expect([s.address, s.namespace, s.taskQueue]).toEqual([data.TEMPORAL_ADDRESS, data.TEMPORAL_NAMESPACE, data.SLIPWAY_TASK_QUEUE]);
  expect(c!.envFrom?.find((e) => e.secretRef)?.secretRef).toEqual({ name: 'slipway-temporal', optional: true });
});

test('the worker exports the Temporal SDK metrics on a named port', () => {
  const [c] = deployment('slipway-worker').spec.template.spec.containers;
  const addr = c!.env?.find((e) => e.name === 'SLIPWAY_TEMPORAL_METRICS_ADDR')?.value;
  expect(c!.ports.find((p) => p.name === 'sdk-metrics')?.containerPort).toBe(Number(addr?.split(':')[1]));
});

test('the local apiserver accepts the whole base in a server-side dry-run', async () => {
  // A dry-run creates no namespace, so the namespaced objects need it to exist (as rbac.test.ts does).
  try {
    await testCluster().core.createNamespace({ body: { metadata: { name: SYSTEM_NS } } });
  } catch (err) {
    if (apiStatus(err) !== 409) throw err;
  }
  const out = execFileSync('kubectl', ['apply', '--server-side', '--dry-run=server', '--force-conflicts', '--field-manager=slipway', '-f', '-'], {
    input: rendered,
    encoding: 'utf8',
    env: process.env,
  });
  const applied = out.trim().split('\n');
  expect(applied.length).toBe(docs.length);
  for (const line of applied) expect(line).toMatch(/ serverside-applied \(server dry run\)$/);
  expect(out).toContain('deployment.apps/slipway-bridge serverside-applied (server dry run)');
  expect(out).toContain('customresourcedefinition.apiextensions.k8s.io/cyclenoderequests.slipway.dev serverside-applied (server dry run)');
});
