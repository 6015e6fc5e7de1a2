// Bad NodeDisruptionBudgets (issue 15, "Bad input"): each refused at admission naming its field
// exactly (test/bad-input/disruption-budget.test.ts, against the apiserver; the #24.10 unit test,
// against the generated CRD). The specs name the node group "it-adm"; the bad-input test aims them
// at its guard. `message` is what the apiserver says.
import type { RefusedCase } from './bad-drain-rules.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const GROUP = 'it-adm';
const LIMIT = "should match '^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$'";
/** A valid budget; each case breaks one thing in it. */
export const budget = () => ({
  nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: GROUP } },
  maxDisrupted: 1 as unknown,
  schedules: [{ schedule: '0 9 * * mon-fri', duration: '2h', maxDisrupted: 0 }] as unknown[],
  perZone: { maxDisrupted: 1 } as unknown,
});
const over = (o: Record<string, unknown>) => ({ ...budget(), ...o });
const window = (w: Record<string, unknown>) => over({ schedules: [{ ...(budget().schedules[0] as object), ...w }] });

export const BAD_DISRUPTION_BUDGETS: RefusedCase[] = [
  { name: 'a negative limit', spec: over({ maxDisrupted: -1 }), field: 'spec.maxDisrupted', message: 'maxDisrupted must be' },
  { name: 'a percentage over 100%', spec: over({ maxDisrupted: '101%' }), field: 'spec.maxDisrupted', message: LIMIT },
  { name: 'a limit that is a word', spec: over({ maxDisrupted: 'ten' }), field: 'spec.maxDisrupted', message: LIMIT },
  { name: 'a negative percentage per zone', spec: over({ perZone: { maxDisrupted: '-5%' } }), field: 'spec.perZone.maxDisrupted', message: LIMIT },
  { name: 'a zone key that is not a label key', spec: over({ perZone: { topologyKey: 'zone key!', maxDisrupted: 1 } }), field: 'spec.perZone.topologyKey', message: '"zone key!"' },
  { name: 'a schedule that is not cron', spec: window({ schedule: 'every weekday at nine' }), field: 'spec.schedules[0].schedule', message: 'is not a 5-field cron schedule' },
  { name: 'a schedule with minute 61', spec: window({ schedule: '61 9 * * *' }), field: 'spec.schedules[0].schedule', message: 'is not a 5-field cron schedule' },
  { name: 'a window without a duration', spec: over({ schedules: [{ schedule: '0 9 * * *', maxDisrupted: 0 }] }), field: 'spec.schedules[0].duration', message: 'Required value' },
  { name: 'a window shorter than a minute', spec: window({ duration: '30s' }), field: 'spec.schedules[0].duration', message: '"30s" must be a duration between 1m and 8760h' },
  { name: 'a window with a limit over 100%', spec: window({ maxDisrupted: '150%' }), field: 'spec.schedules[0].maxDisrupted', message: LIMIT },
  {
    name: 'two windows with the same schedule (overlapping)',
    spec: over({ schedules: [budget().schedules[0], { ...(budget().schedules[0] as object), maxDisrupted: 2 }] }),
    field: 'spec.schedules[1].schedule',
    message: 'two windows have the same schedule',
  },
  { name: 'no limit at all', spec: { nodeSelector: budget().nodeSelector }, field: 'spec.maxDisrupted', message: 'Required value' },
];
