// Asking the apiserver to admit an object without storing it (dryRun: All): the answer is real
// admission (schema, CEL, admission policies) and nothing is left behind for other tests.
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { crdManifest } from '../../api/crd.js';
import { CRDS } from '../../api/crds.js';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { EVACUATION } from '../../api/evacuation.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { NODE_GROUP } from '../../api/node-group-kind.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { FIELD_MANAGER, installCrds } from '../../starter/install-crds.js';
import { namesPath } from './admission-paths.js';
import type { RefusedCase } from './bad-drain-rules.js';
import { waitFor } from './wait.js';
import { mergePatch, serverSideApply } from '../../kube/patch.js';
import { API_VERSION } from '../../api/names.js';

export interface Admission {
  /** 201 when admitted. */
  code: number;
  message: string;
  /** The Status causes of a refusal: one per field. */
  causes: Array<{ field?: string; message?: string }>;
  /** Warning headers of an admitted object. */
  warnings: string;
}

export function admissionClient(kc: KubeConfig) {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const answer = async (create: () => Promise<{ headers: Record<string, string> }>): Promise<Admission> => {
    try {
      const res = await create();
      return { code: 201, message: '', causes: [], warnings: res.headers.warning ?? '' };
    } catch (err) {
      const status = apiStatus(err);
      if (status === undefined) throw err;
      const body = JSON.parse(String((err as { body?: unknown }).body)) as { message?: string; details?: { causes?: Admission['causes'] } };
      return { code: status, message: body.message ?? '', causes: body.details?.causes ?? [], warnings: '' };
    }
  };
  return {
    /** Creates a DrainRule (dry run unless `store`). */
    drainRule: (name: string, spec: unknown, { store = false } = {}) =>
      answer(() =>
        custom.createClusterCustomObjectWithHttpInfo({
          group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, ...(!store && { dryRun: 'All' }),
          body: { apiVersion: API_VERSION, kind: DRAIN_RULE.kind, metadata: { name }, spec },
        }),
      ),
    /** Creates a NodeMaintenance (dry run unless `store`). */
    nodeMaintenance: (name: string, spec: unknown, { store = false } = {}) =>
      answer(() =>
        custom.createClusterCustomObjectWithHttpInfo({
          group: NODE_MAINTENANCE.group, version: NODE_MAINTENANCE.version, plural: NODE_MAINTENANCE.plural, ...(!store && { dryRun: 'All' }),
          body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec },
        }),
      ),
    /** A JSON merge patch of a stored NodeMaintenance (really applied when admitted). */
    patchNodeMaintenance: (name: string, patch: Record<string, unknown>) =>
      answer(() =>
        custom.patchClusterCustomObjectWithHttpInfo(
          { group: NODE_MAINTENANCE.group, version: NODE_MAINTENANCE.version, plural: NODE_MAINTENANCE.plural, name, body: patch },
          mergePatch,
        ),
      ),
    deleteNodeMaintenance: (name: string) =>
      answer(() => custom.deleteClusterCustomObjectWithHttpInfo({ group: NODE_MAINTENANCE.group, version: NODE_MAINTENANCE.version, plural: NODE_MAINTENANCE.plural, name })),
    /** Creates a NodeDisruptionBudget (dry run unless `store`). */
    disruptionBudget: (name: string, spec: unknown, { store = false } = {}) =>
      answer(() =>
        custom.createClusterCustomObjectWithHttpInfo({
          group: NODE_DISRUPTION_BUDGET.group, version: NODE_DISRUPTION_BUDGET.version, plural: NODE_DISRUPTION_BUDGET.plural, ...(!store && { dryRun: 'All' }),
          body: { apiVersion: API_VERSION, kind: NODE_DISRUPTION_BUDGET.kind, metadata: { name }, spec },
        }),
      ),
    /** Creates a NodeGroup (dry run unless `store`). */
    nodeGroup: (name: string, spec: unknown, { store = false } = {}) =>
      answer(() =>
        custom.createClusterCustomObjectWithHttpInfo({
          group: NODE_GROUP.group, version: NODE_GROUP.version, plural: NODE_GROUP.plural, ...(!store && { dryRun: 'All' }),
          body: { apiVersion: API_VERSION, kind: NODE_GROUP.kind, metadata: { name }, spec },
        }),
      ),
    /** Creates an Evacuation (dry run unless `store`). */
    evacuation: (namespace: string, name: string, spec: unknown, { store = false } = {}) =>
      answer(() =>
        custom.createNamespacedCustomObjectWithHttpInfo({
          group: EVACUATION.group, version: EVACUATION.version, plural: EVACUATION.plural, namespace, ...(!store && { dryRun: 'All' }),
          body: { apiVersion: API_VERSION, kind: EVACUATION.kind, metadata: { name, namespace }, spec },
        }),
      ),
    /** Creates a CycleNodeRequest (dry run unless `store`). */
    cycleRequest: (namespace: string, name: string, spec: unknown, { store = false } = {}) =>
      answer(() =>
        custom.createNamespacedCustomObjectWithHttpInfo({
          group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural, namespace, ...(!store && { dryRun: 'All' }),
          body: { apiVersion: API_VERSION, kind: CYCLE_NODE_REQUEST.kind, metadata: { name, namespace }, spec },
        }),
      ),
  };
}

/** A refusal as one text: the apiserver's message and each cause as `field: message`. */
export const refusalText = (a: Admission): string => [a.message, ...a.causes.map((x) => `${x.field}: ${x.message}`)].join('\n');

/**
 * The refusal's cause that names the case's exact field (#24.10: the field itself, or the list or
 * map whose message names the entry or key; see namesPath) and says the case's words, if any.
 */
export function causeFor(a: Admission, c: RefusedCase): { field?: string; message?: string } | undefined {
  const words = typeof c.message === 'string' ? c.message : c.message.apiserver;
  return a.causes.find((x) => namesPath(x.field ?? '', x.message ?? '', c.field) && `${x.field}: ${x.message}`.includes(words));
}

/**
 * Runs fn while the CRD of `kind` admits any spec, as a CRD from before a validation existed did,
 * then installs the generated CRDs again. For tests of objects stored before an upgrade: admission
 * now refuses them, so only this way can a test store one.
 */
/** A spec that today's schema refuses, per kind: the probe that tells which schema is in force. */
const BAD_SPEC: Record<'CycleNodeRequest' | 'DrainRule' | 'NodeMaintenance', unknown> = {
  NodeMaintenance: { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Exists' }] }] }, stage: 'Sideways' },
  CycleNodeRequest: { nodeGroupName: '', selector: { matchLabels: { 'bad key!': '' } } },
  DrainRule: { drain: { behavior: 'NoSuchBehavior' } },
};

/**
 * Runs `fn` while the kind's CRD admits any spec, as an older Slipway whose CRD checked less would
 * have: objects stored meanwhile stay as they are once the real CRD is back (Kubernetes validates
 * writes, not what is stored), which is the case the drains and the bridge must survive.
 */
export async function withSpecUnchecked<T>(kc: KubeConfig, kind: keyof typeof BAD_SPEC, fn: () => Promise<T>): Promise<T> {
  const def = CRDS.find((d) => d.kind === kind)!;
  const body = crdManifest(def) as { spec: { versions: Array<{ schema: { openAPIV3Schema: Record<string, unknown> & { properties: Record<string, unknown> } } }> } };
  const root = body.spec.versions[0]!.schema.openAPIV3Schema;
  root.properties.spec = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  delete root['x-kubernetes-validations'];
  const name = `${def.plural}.${CYCLE_NODE_REQUEST.group}`;
  const custom = kc.makeApiClient(CustomObjectsApi);
  const where = { group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: def.plural };
  const probe = { apiVersion: API_VERSION, kind, metadata: { name: 'probe', ...(def.scope === 'Namespaced' ? { namespace: 'default' } : {}) }, spec: BAD_SPEC[kind] };
  /** True when the bad spec is admitted (dry run), false when refused. */
  const admitsBad = async () => {
    try {
      if (def.scope === 'Cluster') await custom.createClusterCustomObject({ ...where, body: probe, dryRun: 'All' });
      else await custom.createNamespacedCustomObject({ ...where, namespace: 'default', body: probe, dryRun: 'All' });
      return true;
    } catch (err) {
      if (apiStatus(err) !== 422) throw err;
      return false;
    }
  };
  await kc.makeApiClient(ApiextensionsV1Api).patchCustomResourceDefinition({ name, body, fieldManager: FIELD_MANAGER, force: true }, serverSideApply);
  try {
    // The apiserver serves the new schema a moment after the update: wait until a bad spec gets in.
    await waitFor(`${name} to admit any spec`, admitsBad, { timeoutMs: 30_000 });
    return await fn();
  } finally {
    await installCrds(kc);
    // ... and until the real schema is back in force, so later writes are checked again.
    await waitFor(`${name} to check specs again`, async () => !(await admitsBad()), { timeoutMs: 30_000 });
  }
}
