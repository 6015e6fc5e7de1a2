// DrainRules for tests, including invalid ones stored as an older Slipway (whose CRD checked less)
// would have let them in: the DrainRule CRD is swapped for a copy with an open spec, the rule is
// created, and the real CRD is put back. Stored objects stay as they are (Kubernetes validates
// writes, not what is stored), which is exactly the case a drain must survive.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import type { Kube } from '../../activities/kube.js';
import { waitFor } from './wait.js';

const CRD_FILE = 'crds/slipway.dev_drainrules.yaml';
const RULES = { group: 'slipway.dev', version: 'v1alpha1', plural: 'drainrules' } as const;

const kubectlApply = (yaml: string) =>
  execFileSync('kubectl', ['apply', '--server-side', '--force-conflicts', '--field-manager=slipway', '-f', '-'], { input: yaml, stdio: ['pipe', 'ignore', 'inherit'] });

export function drainRulesApi(c: Kube): CustomObjectsApi {
  return c.config.makeApiClient(CustomObjectsApi);
}

export async function createDrainRule(c: Kube, name: string, spec: unknown): Promise<void> {
  await drainRulesApi(c).createClusterCustomObject({ ...RULES, body: { apiVersion: 'slipway.dev/v1alpha1', kind: 'DrainRule', metadata: { name }, spec } });
}

export async function deleteDrainRule(c: Kube, name: string): Promise<void> {
  await drainRulesApi(c).deleteClusterCustomObject({ ...RULES, name }).catch(() => undefined);
}

/** Stores a DrainRule that today's CRD would refuse (see the header). */
export async function storeUnvalidatedDrainRule(c: Kube, name: string, spec: unknown): Promise<void> {
  const real = readFileSync(CRD_FILE, 'utf8');
  const open = parse(real);
  for (const v of open.spec.versions) {
    v.schema.openAPIV3Schema.properties.spec = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    delete v.schema.openAPIV3Schema['x-kubernetes-validations'];
  }
  kubectlApply(stringify(open));
  try {
    // The apiserver takes the new schema on asynchronously: retry until the create is let in.
    await waitFor(`DrainRule ${name} stored past validation`, async () => {
      await createDrainRule(c, name, spec);
      return true;
    }, { timeoutMs: 20_000, intervalMs: 250 });
  } finally {
    kubectlApply(real);
  }
  // And until the real schema is back in force, so later creates in the test are checked.
  await waitFor('the real DrainRule schema back in force', async () => {
    try {
      await createDrainRule(c, `${name}-probe`, { drain: { behavior: 'NoSuchBehavior' } });
      await deleteDrainRule(c, `${name}-probe`);
      return false;
    } catch {
      return true;
    }
  }, { timeoutMs: 20_000, intervalMs: 250 });
}
