// The apiserver itself enforces the DrainRule CRD's schema and CEL rules, as installed by
// installCrds: a bad rule never reaches the drain, and kubectl users see the same messages.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { apiStatus, loadKubeConfig } from '../../activities/kube.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { installCrds } from '../../starter/install-crds.js';
import { CRDS } from '../../api/crds.js';
import { uniqueName } from '../support/cluster.js';

const kc = loadKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const { group, version, plural } = DRAIN_RULE;
const created: string[] = [];

async function createRule(spec: unknown): Promise<unknown> {
  const name = uniqueName('it-dr');
  const body = { apiVersion: `${group}/${version}`, kind: DRAIN_RULE.kind, metadata: { name }, spec };
  const obj = await custom.createClusterCustomObject({ group, version, plural, body });
  created.push(name);
  return obj;
}

/** The apiserver's refusal of spec: HTTP status and its Status message (the body is a JSON string in client-node 1.4). */
async function rejection(spec: unknown): Promise<{ code: number | undefined; message: string }> {
  try {
    await createRule(spec);
  } catch (err) {
    const body = (err as { body?: unknown }).body;
    return { code: apiStatus(err), message: String((JSON.parse(String(body)) as { message?: string }).message) };
  }
  throw new Error(`DrainRule with spec ${JSON.stringify(spec)} was accepted`);
}

const sel = (matchExpressions: unknown[]) => ({ selector: { matchExpressions } });

beforeAll(async () => {
  await installCrds(kc);
});

afterAll(async () => {
  for (const name of created) await custom.deleteClusterCustomObject({ group, version, plural, name });
});

test('installCrds is idempotent, leaves the CRD Established, and the server stores the generated CRD unchanged', async () => {
  expect(await installCrds(kc)).toEqual(CRDS.map((d) => `${d.plural}.slipway.dev`));
  // Read raw JSON (the typed ApiextensionsV1Api model renames x-kubernetes-* keys).
  const crd = (await custom.getClusterCustomObject({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', name: 'drainrules.slipway.dev' })) as {
    metadata: { managedFields: { manager: string; operation: string }[] };
    spec: { names: unknown; versions: unknown[] };
    status: { conditions: { type: string; status: string }[] };
  };
  expect(crd.status.conditions.find((c) => c.type === 'Established')?.status).toBe('True');
  expect(crd.metadata.managedFields.some((f) => f.manager === 'slipway' && f.operation === 'Apply')).toBe(true);
  const file = parse(readFileSync('crds/slipway.dev_drainrules.yaml', 'utf8')) as { spec: { names: unknown; versions: unknown[] } };
  expect(crd.spec.names).toEqual(file.spec.names);
  expect(crd.spec.versions).toEqual(file.spec.versions);
});

test('a valid rule (Drain, order 10, pods selector) is accepted and stored as written', async () => {
  const spec = { drain: { behavior: 'Drain', order: 10 }, pods: [{ selector: { matchLabels: { app: 'db' } } }] };
  const obj = (await createRule(spec)) as { spec: unknown };
  expect(obj.spec).toEqual(spec);
});

test('order with Skip is rejected with 422 and the CEL message', async () => {
  const r = await rejection({ drain: { behavior: 'Skip', order: 1 } });
  expect(r.code).toBe(422);
  expect(r.message).toContain('spec.drain');
  expect(r.message).toContain('order is allowed only with behavior Drain');
});

test('In without values is rejected with the values message', async () => {
  const r = await rejection({ drain: { behavior: 'Drain' }, pods: [sel([{ key: 'app', operator: 'In' }])] });
  expect(r.code).toBe(422);
  expect(r.message).toContain('spec.pods[0].selector.matchExpressions[0]');
  expect(r.message).toContain('values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist');
});

test('Exists with values is rejected too', async () => {
  const r = await rejection({ drain: { behavior: 'Drain' }, nodes: [sel([{ key: 'app', operator: 'Exists', values: ['x'] }])] });
  expect(r.code).toBe(422);
  expect(r.message).toContain('values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist');
});

test('an unknown operator is rejected by the enum', async () => {
  const r = await rejection({ drain: { behavior: 'Drain' }, pods: [sel([{ key: 'app', operator: 'Like', values: ['x'] }])] });
  expect(r.code).toBe(422);
  expect(r.message).toContain('spec.pods[0].selector.matchExpressions[0].operator');
  expect(r.message).toContain('Unsupported value: "Like"');
});

test('duplicate pods entries are rejected as not unique', async () => {
  const entry = { selector: { matchLabels: { app: 'db' } } };
  const r = await rejection({ drain: { behavior: 'Drain' }, pods: [entry, entry] });
  expect(r.code).toBe(422);
  expect(r.message).toContain('entries in pods must be unique');
});

test('an empty pods entry is rejected', async () => {
  const r = await rejection({ drain: { behavior: 'Drain' }, pods: [{}] });
  expect(r.code).toBe(422);
  expect(r.message).toContain('a pods entry needs a selector or a namespaceSelector');
});
