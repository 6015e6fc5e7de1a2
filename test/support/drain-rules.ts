// DrainRules for tests, including invalid ones stored as an older Slipway (whose CRD checked less)
// would have let them in (support/admission.ts withSpecUnchecked).
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { withSpecUnchecked } from './admission.js';
import { API_VERSION, DRAIN_RULE } from '../../api/names.js';

const RULES = DRAIN_RULE;

export function drainRulesApi(c: Kube): CustomObjectsApi {
  return c.config.makeApiClient(CustomObjectsApi);
}

export async function createDrainRule(c: Kube, name: string, spec: unknown): Promise<void> {
  await drainRulesApi(c).createClusterCustomObject({ ...RULES, body: { apiVersion: API_VERSION, kind: DRAIN_RULE.kind, metadata: { name }, spec } });
}

export async function deleteDrainRule(c: Kube, name: string): Promise<void> {
  await drainRulesApi(c).deleteClusterCustomObject({ ...RULES, name }).catch(() => undefined);
}

/** Stores a DrainRule that today's CRD would refuse (see the header). */
export async function storeUnvalidatedDrainRule(c: Kube, name: string, spec: unknown): Promise<void> {
  await withSpecUnchecked(c.config, 'DrainRule', () => createDrainRule(c, name, spec));
}
