// Installs (or updates) every slipway CRD and waits until the apiserver serves it, then the
// admission policies that go with them (crds/admission-policies.yaml). Server-side serverSideApply with a raw
// body: the typed client models would drop x-kubernetes-validations and default, and serverSideApply is
// idempotent, so a second install is a no-op.
import { AdmissionregistrationV1Api, ApiextensionsV1Api, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { crdManifest } from '../api/crd.js';
import { CRDS, POLICIES } from '../api/crds.js';
import { loadKubeConfig } from '../kube/client.js';
import { serverSideApply } from '../kube/patch.js';

export const FIELD_MANAGER = 'slipway';

const established = (crd: V1CustomResourceDefinition) =>
  crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;

/** Applies every CRD in CRDS, waits (up to timeoutMs) until each is Established, then applies POLICIES. Returns the CRDs' names, then the policies'. */
export async function installCrds(kc: KubeConfig, { timeoutMs = 60_000 } = {}): Promise<string[]> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const def of CRDS) {
    const body = crdManifest(def);
    const name = (body.metadata as { name: string }).name;
    // force: slipway owns these objects; take over fields another manager (kubectl) set.
    await api.patchCustomResourceDefinition({ name, body, fieldManager: FIELD_MANAGER, force: true }, serverSideApply);
    names.push(name);
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await api.readCustomResourceDefinition({ name });
      if (established(crd)) break;
      if (Date.now() > deadline) {
        const conds = (crd.status?.conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason ?? ''}: ${c.message ?? ''})`);
        throw new Error(`CRD ${name} not Established after ${timeoutMs} ms; conditions: ${conds.join('; ') || 'none'}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  for (const body of POLICIES) {
    const name = (body.metadata as { name: string }).name;
    const args = { name, body, fieldManager: FIELD_MANAGER, force: true };
    if (body.kind === 'ValidatingAdmissionPolicy') await admission.patchValidatingAdmissionPolicy(args, serverSideApply);
    else if (body.kind === 'ValidatingAdmissionPolicyBinding') await admission.patchValidatingAdmissionPolicyBinding(args, serverSideApply);
    else throw new Error(`cannot install a ${String(body.kind)}`);
    names.push(`${String(body.kind)}/${name}`);
  }
  return names;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installCrds(loadKubeConfig()).then(
    (names) => console.log(`installed ${names.join(', ')}`),
    (err: unknown) => {
      console.error(`install-crds failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
