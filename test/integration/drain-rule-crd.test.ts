// installCrds installs the CRDs exactly as generated, and the admission policies with them; a valid
// rule is stored as written. What admission refuses is tested with one corpus for zod and the
// apiserver (admission-drain-rule.test.ts).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { readFileSync } from 'node:fs';
import { loadKubeConfig } from '../../kube/client.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { installCrds } from '../../starter/install-crds.js';
import { CRDS, POLICIES } from '../../api/crds.js';
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

beforeAll(async () => {
  await installCrds(kc);
});

afterAll(async () => {
  for (const name of created) await custom.deleteClusterCustomObject({ group, version, plural, name });
});

test('installCrds is idempotent, leaves the CRD Established, and the server stores the generated CRD unchanged', async () => {
  expect(await installCrds(kc)).toEqual([...CRDS.map((d) => `${d.plural}.slipway.dev`), ...POLICIES.map((p) => `${String(p.kind)}/${(p.metadata as { name: string }).name}`)]);
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

// Refusals of bad rules (and the every-pod warning) are the corpus in admission-drain-rule.test.ts.

test('installCrds also installs the admission policies as generated (crds/admission-policies.yaml)', async () => {
  const file = parseAllDocuments(readFileSync('crds/admission-policies.yaml', 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: unknown });
  expect(file.map((d) => d.kind)).toEqual(POLICIES.map((p) => p.kind));
  const plural = (kind: string) => (kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings');
  for (const doc of file) {
    const stored = (await custom.getClusterCustomObject({ group: 'admissionregistration.k8s.io', version: 'v1', plural: plural(doc.kind), name: doc.metadata.name })) as { spec: Record<string, unknown> };
    expect(stored.spec).toMatchObject(doc.spec as Record<string, unknown>);
  }
});
