// Bad NodeDisruptionBudgets (issue 15, "Bad input"), over the guard's nodes with a real worker and
// bridge running: refused at admission naming the field. After each, nothing was disrupted. A bad
// string limit is refused by the schema's pattern, which the apiserver quotes (a CEL rule with a
// friendlier message costs more than the CRD budget allows).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { NODE_GROUP_LABEL } from '../../activities/inventory.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient, refusalText } from '../support/admission.js';
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

/** A valid budget over the guard's nodes; each case breaks one thing in it. */
const valid = () => ({
  nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: g.group } },
  maxDisrupted: 1,
  schedules: [{ schedule: '0 9 * * mon-fri', duration: '2h', maxDisrupted: 0 }],
  perZone: { maxDisrupted: 1 },
});
type Spec = ReturnType<typeof valid>;
const window = (s: Spec, w: Record<string, unknown>) => ({ ...s, schedules: [{ ...s.schedules[0], ...w }] });

const REFUSED: Array<{ name: string; spec: (s: Spec) => unknown; field: string; words: string }> = [
  { name: 'a negative limit', spec: (s) => ({ ...s, maxDisrupted: -1 }), field: 'spec.maxDisrupted', words: 'maxDisrupted must be' },
  { name: 'a percentage over 100%', spec: (s) => ({ ...s, maxDisrupted: '101%' }), field: 'spec.maxDisrupted', words: "should match '^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$'" },
  { name: 'a limit that is a word', spec: (s) => ({ ...s, maxDisrupted: 'ten' }), field: 'spec.maxDisrupted', words: "should match '^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$'" },
  { name: 'a negative percentage per zone', spec: (s) => ({ ...s, perZone: { maxDisrupted: '-5%' } }), field: 'spec.perZone.maxDisrupted', words: "should match '^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$'" },
  { name: 'a zone key that is not a label key', spec: (s) => ({ ...s, perZone: { topologyKey: 'zone key!', maxDisrupted: 1 } }), field: 'spec.perZone.topologyKey', words: '' },
  { name: 'a schedule that is not cron', spec: (s) => window(s, { schedule: 'every weekday at nine' }), field: 'spec.schedules[0].schedule', words: 'is not a 5-field cron schedule' },
  { name: 'a schedule with minute 61', spec: (s) => window(s, { schedule: '61 9 * * *' }), field: 'spec.schedules[0].schedule', words: 'is not a 5-field cron schedule' },
  { name: 'a window without a duration', spec: (s) => ({ ...s, schedules: [{ schedule: '0 9 * * *', maxDisrupted: 0 }] }), field: 'spec.schedules[0].duration', words: 'Required' },
  { name: 'a window shorter than a minute', spec: (s) => window(s, { duration: '30s' }), field: 'spec.schedules[0].duration', words: '' },
  { name: 'a window with a limit over 100%', spec: (s) => window(s, { maxDisrupted: '150%' }), field: 'spec.schedules[0].maxDisrupted', words: "should match '^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$'" },
  { name: 'two windows with the same schedule (overlapping)', spec: (s) => ({ ...s, schedules: [s.schedules[0], { ...s.schedules[0], maxDisrupted: 2 }] }), field: 'spec.schedules', words: 'two windows have the same schedule' },
  { name: 'no limit at all', spec: (s) => ({ nodeSelector: s.nodeSelector }), field: 'spec.maxDisrupted', words: 'Required' },
];

describe('refused at admission, naming the field', () => {
  test.each(REFUSED.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-nb');
    const a = await admit.disruptionBudget(name, c.spec(valid()), { store: true });
    if (a.code === 201) stored.push(name);
    expect(a.code).toBe(422);
    const said = refusalText(a);
    expect(said).toContain(c.field);
    expect(said).toContain(c.words);
    await g.untouched(m);
  });
});
