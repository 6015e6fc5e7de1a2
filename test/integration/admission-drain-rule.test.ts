// The apiserver half of the DrainRule corpus (the zod half: test/unit/admission-corpus.test.ts):
// each valid edge case is admitted, and a rule that applies to every pod is admitted with a warning
// saying so. The bad ones are refused in test/bad-input/drain-rule.test.ts.
import { loadKubeConfig } from '../../kube/client.js';
import { everyPodWarning } from '../../api/drain-rule.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient } from '../support/admission.js';
import { EVERY_POD_CASES, VALID_DRAIN_RULES } from '../support/bad-drain-rules.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const kc = loadKubeConfig();
const admit = admissionClient(kc);

beforeAll(async () => {
  await installCrds(kc);
  // A new policy takes effect once the apiserver's informer has it: wait for its first warning.
  await waitFor('the every-pod policy to warn', async () => (await admit.drainRule(uniqueName('it-adm'), { drain: { behavior: 'Skip' } })).warnings !== '', { timeoutMs: 30_000 });
});

test.each(VALID_DRAIN_RULES.map((c) => [c.name, c] as const))('admits %s', async (_name, c) => {
  const a = await admit.drainRule(uniqueName('it-adm'), c.spec);
  expect([a.code, a.message]).toEqual([201, '']);
});

test.each(EVERY_POD_CASES.map((c) => [c.name, c] as const))('%s: admitted, with the every-pod warning exactly when it applies to every pod', async (_name, c) => {
  const name = uniqueName('it-adm');
  const a = await admit.drainRule(name, c.spec);
  expect(a.code).toBe(201);
  if (c.warns) expect(a.warnings).toContain(everyPodWarning(name, c.spec.drain.behavior));
  else expect(a.warnings).toBe('');
});
