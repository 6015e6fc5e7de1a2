// Bad NodeDisruptionBudgets (issue 15, "Bad input"), over the guard's nodes with a real worker and
// bridge running: refused at admission naming the exact field (test/support/bad-disruption-budgets.ts). After each, nothing was disrupted. A bad
// string limit is refused by the schema's pattern, which the apiserver quotes (a CEL rule with a
// friendlier message costs more than the CRD budget allows).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient, causeFor, refusalText } from '../support/admission.js';
import { BAD_DISRUPTION_BUDGETS } from '../support/bad-disruption-budgets.js';
import { uniqueName } from '../support/cluster.js';
import { Guard } from './guard.js';

const g = new Guard('bi-nb');
const admit = admissionClient(g.f.c.config);
const custom = () => g.f.c.config.makeApiClient(CustomObjectsApi);
const ref = { group: NODE_DISRUPTION_BUDGET.group, version: NODE_DISRUPTION_BUDGET.version, plural: NODE_DISRUPTION_BUDGET.plural };
const stored: string[] = [];

beforeAll(async () => {
  await installCrds(g.f.c.config);
  await g.setup();
  await g.f.bridge();
}, 120_000);
afterAll(async () => {
  for (const name of stored) await custom().deleteClusterCustomObject({ ...ref, name }).catch(() => undefined);
  await g.teardown();
});

/** The corpus spec, aimed at the guard: its selector names the guard's node group. */
const aimed = (spec: unknown): unknown => JSON.parse(JSON.stringify(spec).replaceAll('"it-adm"', JSON.stringify(g.group)));

describe('refused at admission, naming the field', () => {
  test.each(BAD_DISRUPTION_BUDGETS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-nb');
    const a = await admit.disruptionBudget(name, aimed(c.spec), { store: true });
    if (a.code === 201) stored.push(name);
    expect(a.code).toBe(422);
    expect([causeFor(a, c), refusalText(a)]).toEqual([expect.anything(), refusalText(a)]);
    await g.untouched(m);
  });
});
