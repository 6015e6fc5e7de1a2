// The apiserver half of the CycleNodeRequest corpus (the zod half: test/unit/admission-corpus.test.ts):
// each bad request (unbounded durations, bad label keys, absurd counts, bad URLs and expressions)
// is refused at admission naming its field, and each valid edge case is admitted.
import { loadKubeConfig } from '../../activities/kube.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient, causeFor } from '../support/admission.js';
import { BAD_CYCLE_REQUESTS, VALID_CYCLE_REQUESTS } from '../support/bad-cycle-requests.js';
import { uniqueName } from '../support/cluster.js';

const kc = loadKubeConfig();
const admit = admissionClient(kc);

beforeAll(async () => {
  await installCrds(kc);
});

test.each(BAD_CYCLE_REQUESTS.map((c) => [c.name, c] as const))('refuses %s with 422, naming the field', async (_name, c) => {
  const a = await admit.cycleRequest('default', uniqueName('it-adm'), c.spec);
  expect(a.code).toBe(422);
  expect([causeFor(a, c), a.message]).toEqual([expect.anything(), a.message]);
});

test.each(VALID_CYCLE_REQUESTS.map((c) => [c.name, c] as const))('admits %s', async (_name, c) => {
  const a = await admit.cycleRequest('default', uniqueName('it-adm'), c.spec);
  expect([a.code, a.message]).toEqual([201, '']);
});
