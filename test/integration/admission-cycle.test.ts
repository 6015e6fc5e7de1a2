// The apiserver half of the CycleNodeRequest corpus (the zod half: test/unit/admission-corpus.test.ts):
// each valid edge case is admitted. The bad ones are refused in test/bad-input/cycle-node-request.test.ts,
// stored for real against a guard node group, with a check that nothing was disrupted.
import { loadKubeConfig } from '../../kube/client.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient } from '../support/admission.js';
import { VALID_CYCLE_REQUESTS } from '../support/bad-cycle-requests.js';
import { uniqueName } from '../support/cluster.js';

const kc = loadKubeConfig();
const admit = admissionClient(kc);

beforeAll(async () => {
  await installCrds(kc);
});

test.each(VALID_CYCLE_REQUESTS.map((c) => [c.name, c] as const))('admits %s', async (_name, c) => {
  const a = await admit.cycleRequest('default', uniqueName('it-adm'), c.spec);
  expect([a.code, a.message]).toEqual([201, '']);
});
