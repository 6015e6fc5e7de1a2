// Bad NodeGroups (issue 15 §2): each refused at admission naming its field exactly
// (test/bad-input/node-group.test.ts, against the apiserver; the #24.10 unit test, against the
// generated CRD). The specs name node group "it-adm" and namespace "it-adm-ns"; the bad-input test
// aims them at its guard. `message` is what the apiserver says.
import type { RefusedCase } from './bad-drain-rules.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const GROUP = 'it-adm';
/** A valid spec; each case breaks one thing in it. */
export const nodeGroup = () => ({
  requestNamespace: 'it-adm-ns',
  template: { nodeGroupName: GROUP, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: GROUP } } } as Record<string, unknown>,
  driftObserver: { interval: '5s' } as Record<string, unknown>,
});
const over = (o: Record<string, unknown>) => ({ ...nodeGroup(), ...o });
const template = (t: Record<string, unknown>) => over({ template: { ...nodeGroup().template, ...t } });

export const BAD_NODE_GROUPS: RefusedCase[] = [
  { name: 'a template selector that is empty (every node)', spec: template({ selector: {} }), field: 'spec.template.selector', message: 'selector must not be empty' },
  { name: 'a template naming no node group', spec: template({ nodeGroupName: '' }), field: 'spec.template.nodeGroupName', message: 'name at least one node group' },
  { name: 'a template with no selector at all', spec: over({ template: { nodeGroupName: GROUP } }), field: 'spec.template.selector', message: 'Required value' },
  { name: 'a template with an unknown cycle method', spec: template({ cycleSettings: { method: 'Evaporate' } }), field: 'spec.template.cycleSettings.method', message: 'Unsupported value' },
  { name: 'a template with a cyclingTimeout that is not a duration', spec: template({ cycleSettings: { cyclingTimeout: 'soon' } }), field: 'spec.template.cycleSettings.cyclingTimeout', message: 'should match' },
  { name: 'a template with concurrency 0', spec: template({ cycleSettings: { concurrency: 0 } }), field: 'spec.template.cycleSettings.concurrency', message: 'should be greater than or equal to 1' },
  { name: 'a template with a regexMatch that does not compile', spec: template({ healthChecks: [{ endpoint: 'http://{{ .NodeIP }}/ok', waitPeriod: '1m' }, { endpoint: 'http://{{ .NodeIP }}/ready', waitPeriod: '1m', regexMatch: 'ok(' }] }), field: 'spec.template.healthChecks[1].regexMatch', message: 'missing closing )' },
  { name: 'an observer interval under 5 s', spec: over({ driftObserver: { interval: '1s' } }), field: 'spec.driftObserver.interval', message: '"1s" must be a duration between 5s' },
  { name: 'an observer interval that is not a duration', spec: over({ driftObserver: { interval: 'hourly' } }), field: 'spec.driftObserver.interval', message: 'should match' },
  { name: 'a request namespace that is not a namespace name', spec: over({ requestNamespace: 'Ops_Team' }), field: 'spec.requestNamespace', message: 'should match' },
  { name: 'no template', spec: { requestNamespace: 'it-adm-ns' }, field: 'spec.template', message: 'Required value' },
  { name: 'an observer schedule without a duration', spec: over({ driftObserver: { interval: '5s', schedule: '0 2 * * *' } }), field: 'spec.driftObserver.duration', message: 'schedule and duration go together' },
  { name: 'an observer duration without a schedule', spec: over({ driftObserver: { interval: '5s', duration: '3h' } }), field: 'spec.driftObserver.schedule', message: 'schedule and duration go together' },
  { name: 'an observer schedule that is not cron', spec: over({ driftObserver: { interval: '5s', schedule: 'nightly', duration: '3h' } }), field: 'spec.driftObserver.schedule', message: 'is not a 5-field cron schedule' },
  { name: 'an unknown provider', spec: template({ provider: 'gcp' }), field: 'spec.template.provider', message: 'Unsupported value' },
];
