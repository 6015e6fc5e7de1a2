// #25.2 The API explains itself: every field of every generated CRD carries a description (what
// `kubectl explain` prints), each kind and printer column too; conditions are a map list keyed by
// type and every status has observedGeneration (kubectl wait and GitOps health checks rely on both).
import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { crdManifest, type JsonSchema } from '../../api/crd.js';
import { CRDS } from '../../api/crds.js';

type Column = { name: string; description?: string };
type Version = { schema: { openAPIV3Schema: JsonSchema }; additionalPrinterColumns?: Column[] };
type Manifest = { spec: { names: { kind: string }; versions: Version[] } };

const manifests = CRDS.map((d) => crdManifest(d) as Manifest);
const rootOf = (m: Manifest) => m.spec.versions[0]!.schema.openAPIV3Schema;
const props = (s: JsonSchema) => (s.properties as Record<string, JsonSchema> | undefined) ?? {};

/** Every property with its path, through lists and maps. */
function properties(s: JsonSchema, path: string): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [];
  for (const [k, v] of Object.entries(props(s))) out.push([`${path}.${k}`, v], ...properties(v, `${path}.${k}`));
  if (s.items) out.push(...properties(s.items as JsonSchema, `${path}[*]`));
  if (typeof s.additionalProperties === 'object') out.push(...properties(s.additionalProperties as JsonSchema, `${path}.*`));
  return out;
}
const described = (s: JsonSchema) => typeof s.description === 'string' && s.description.trim().length > 0;

describe('#25.2 the API explains itself', () => {
  test('#25.2 every property of every kind has a description', () => {
    // metadata is the apiserver's (a CRD may not describe it).
    const missing = manifests.flatMap((m) => properties(rootOf(m), m.spec.names.kind).filter(([p, s]) => !described(s) && p !== `${m.spec.names.kind}.metadata`).map(([p]) => p));
    expect(missing).toEqual([]);
  });

  test('#25.2 every kind has a top-level description and every printer column one', () => {
    for (const m of manifests) {
      expect([m.spec.names.kind, described(rootOf(m))]).toEqual([m.spec.names.kind, true]);
      for (const c of m.spec.versions[0]!.additionalPrinterColumns ?? []) expect([m.spec.names.kind, c.name, Boolean(c.description?.trim())]).toEqual([m.spec.names.kind, c.name, true]);
    }
  });

  test('#25.2 status.conditions is a map list keyed by type, and every status has observedGeneration', () => {
    const withStatus = manifests.filter((m) => props(rootOf(m)).status);
    expect(withStatus.length).toBe(6);
    for (const m of withStatus) {
      const status = props(rootOf(m)).status!;
      const kind = m.spec.names.kind;
      expect([kind, props(status).observedGeneration?.type]).toEqual([kind, 'integer']);
      const conditions = props(status).conditions;
      if (!conditions) continue;
      expect([kind, conditions['x-kubernetes-list-type'], conditions['x-kubernetes-list-map-keys']]).toEqual([kind, 'map', ['type']]);
      expect([kind, (conditions.items as JsonSchema).required]).toEqual([kind, expect.arrayContaining(['type'])]);
    }
  });

  test('#25.2 short names collide with no common CRD (Istio, cert-manager, Argo, Cluster API, Kyverno, Prometheus operator, Karpenter, Velero, Crossplane)', () => {
    const taken = new Set(COMMON_SHORT_NAMES);
    const ours = CRDS.flatMap((d) => (d.shortNames ?? []).filter((n) => !DEPRECATED_SHORT_NAMES.includes(n)));
    expect(ours.filter((n) => taken.has(n))).toEqual([]);
    expect(new Set(ours).size).toBe(ours.length);
    for (const d of CRDS) expect([d.kind, (d.shortNames ?? []).filter((n) => !DEPRECATED_SHORT_NAMES.includes(n)).length]).toEqual([d.kind, 1]);
  });
});

describe('#25.2 deploy/samples', () => {
  test('#25.2 one sample per kind, deploy/samples/<kind>.yaml, whose spec its zod type accepts', () => {
    expect(readdirSync('deploy/samples').sort()).toEqual(CRDS.map((d) => `${d.kind.toLowerCase()}.yaml`).sort());
    for (const d of CRDS) {
      const doc = parse(readFileSync(`deploy/samples/${d.kind.toLowerCase()}.yaml`, 'utf8')) as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec: unknown };
      expect([d.kind, doc.apiVersion, doc.kind, d.scope === 'Namespaced' ? doc.metadata.namespace : undefined]).toEqual([d.kind, 'slipway.dev/v1alpha1', d.kind, d.scope === 'Namespaced' ? 'default' : undefined]);
      const parsed = d.spec.safeParse(doc.spec);
      expect([d.kind, parsed.success ? [] : parsed.error.issues]).toEqual([d.kind, []]);
    }
  });
});

/** Short names of widely installed CRDs and built-in kinds, checked against ours. */
const COMMON_SHORT_NAMES = [
  // built-in
  'cm', 'cs', 'ds', 'deploy', 'ep', 'ev', 'hpa', 'ing', 'limits', 'netpol', 'no', 'ns', 'pdb', 'po', 'pv', 'pvc', 'quota', 'rc', 'rs', 'sa', 'sc', 'sts', 'svc', 'csr', 'crd', 'crds', 'pc', 'psp', 'ingclass', 'vac',
  // Istio
  'dr', 'vs', 'gw', 'se', 'pa', 'ra', 'ap', 'sidecar', 'we', 'wg', 'ef', 'tm',
  // cert-manager
  'cert', 'certs', 'cr', 'crs', 'issuer', 'ci', 'clusterissuer', 'ord', 'chal',
  // Karpenter
  'nc', 'np', 'nodeclaim', 'nodepool', 'ec2nc',
  // Argo CD / Workflows / Rollouts
  'app', 'apps', 'appproj', 'appset', 'wf', 'wftmpl', 'cwf', 'cwft', 'ro', 'at', 'aa', 'cwftmpl',
  // Cluster API
  'mhc', 'md', 'ms', 'mp', 'cl', 'cc', 'kcp', 'm', 'ma',
  // Kyverno
  'pol', 'cpol', 'polr', 'cpolr', 'ur', 'cleanpol', 'ccleanpol',
  // Prometheus operator
  'smon', 'pmon', 'promrule', 'am', 'prom', 'amcfg', 'scfg', 'probe',
  // Velero
  'backup', 'restore', 'schedule', 'bsl', 'vsl',
  // Crossplane
  'xrd', 'xrds', 'comp', 'pkg', 'prov', 'func', 'drc', 'er', 'mr',
  // Gateway API, snapshots, KEDA, Flux, Knative
  'gtw', 'gc', 'vs', 'vsc', 'vsclass', 'so', 'sj', 'ta', 'cta', 'ks', 'hr', 'gitrepo', 'ksvc', 'rev', 'kservice',
];
/** Kept for one release so scripts using them keep working (CHANGELOG.md); resolved first-found by kubectl. */
const DEPRECATED_SHORT_NAMES = ['dr'];
