// Bad NodeGroups (issue 15 §2), aimed at the guard's nodes with a real bridge and worker running:
// refused at admission naming the field, or accepted and reported in status with a Warning Event;
// the CLI refuses a NodeGroup whose template selects no node. After each, nothing was disrupted
// and no CycleNodeRequest was made from it.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { NODE_GROUP_LABEL } from '../../activities/inventory.js';
import { setKwokTemplateHash } from '../../stack/kwok/nodes.js';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { FROM_NODE_GROUP_LABEL, NODE_GROUP, type NodeGroupObject } from '../../api/node-group-kind.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient, refusalText } from '../support/admission.js';
import { cli, expectOneLineError } from '../support/cli.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';

const g = new Guard('bi-ng');
const admit = admissionClient(g.f.c.config);
const custom = () => g.f.c.config.makeApiClient(CustomObjectsApi);
const ref = { group: NODE_GROUP.group, version: NODE_GROUP.version, plural: NODE_GROUP.plural };
const stored: string[] = [];
const env = () => ({ SLIPWAY_TASK_QUEUE: g.f.taskQueue });

beforeAll(async () => {
  await installCrds(g.f.c.config);
  await g.setup();
  await g.f.bridge({ nodeGroups: true });
  // The guard's group has a template its nodes do not match: all of them have drifted, so a valid
  // NodeGroup with its observer on would make a request for them. No bad one may.
  await setKwokTemplateHash(g.f.c.core, g.group, 'bi-v2');
  await g.remember();
}, 120_000);
afterAll(async () => {
  await setKwokTemplateHash(g.f.c.core, g.group, null).catch(() => undefined);
  for (const name of stored) await custom().deleteClusterCustomObject({ ...ref, name }).catch(() => undefined);
  await g.teardown();
});

/** A valid spec aimed at the guard's nodes; each case breaks one thing in it. */
const valid = () => ({
  requestNamespace: g.f.ns,
  template: { nodeGroupName: g.group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: g.group } } },
  driftObserver: { interval: '5s' },
});
type Spec = ReturnType<typeof valid>;

const REFUSED: Array<{ name: string; spec: (s: Spec) => unknown; field: string; words: string }> = [
  { name: 'a template selector that is empty (every node)', spec: (s) => ({ ...s, template: { ...s.template, selector: {} } }), field: 'spec.template', words: 'selector must not be empty' },
  { name: 'a template naming no node group', spec: (s) => ({ ...s, template: { ...s.template, nodeGroupName: '' } }), field: 'spec.template', words: 'name at least one node group' },
  { name: 'a template with no selector at all', spec: (s) => ({ ...s, template: { nodeGroupName: g.group } }), field: 'spec.template.selector', words: 'Required' },
  { name: 'a template with an unknown cycle method', spec: (s) => ({ ...s, template: { ...s.template, cycleSettings: { method: 'Evaporate' } } }), field: 'spec.template.cycleSettings.method', words: 'Unsupported value' },
  { name: 'a template with a cyclingTimeout that is not a duration', spec: (s) => ({ ...s, template: { ...s.template, cycleSettings: { cyclingTimeout: 'soon' } } }), field: 'spec.template.cycleSettings.cyclingTimeout', words: 'should match' },
  { name: 'a template with concurrency 0', spec: (s) => ({ ...s, template: { ...s.template, cycleSettings: { concurrency: 0 } } }), field: 'spec.template.cycleSettings.concurrency', words: 'should be greater than or equal to 1' },
  { name: 'an observer interval under 5 s', spec: (s) => ({ ...s, driftObserver: { interval: '1s' } }), field: 'spec.driftObserver.interval', words: '5s' },
  { name: 'an observer interval that is not a duration', spec: (s) => ({ ...s, driftObserver: { interval: 'hourly' } }), field: 'spec.driftObserver.interval', words: 'should match' },
  { name: 'a request namespace that is not a namespace name', spec: (s) => ({ ...s, requestNamespace: 'Ops_Team' }), field: 'spec.requestNamespace', words: 'should match' },
  { name: 'no template', spec: (s) => ({ requestNamespace: s.requestNamespace }), field: 'spec.template', words: 'Required' },
  { name: 'an observer schedule without a duration', spec: (s) => ({ ...s, driftObserver: { interval: '5s', schedule: '0 2 * * *' } }), field: 'spec.driftObserver', words: 'schedule and duration go together' },
  { name: 'an observer schedule that is not cron', spec: (s) => ({ ...s, driftObserver: { interval: '5s', schedule: 'nightly', duration: '3h' } }), field: 'spec.driftObserver.schedule', words: 'is not a 5-field cron schedule' },
  { name: 'an unknown provider', spec: (s) => ({ ...s, template: { ...s.template, provider: 'gcp' } }), field: 'spec.template.provider', words: 'Unsupported value' },
];

async function requestsMade(): Promise<number> {
  const l = (await custom().listClusterCustomObject({ group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural, labelSelector: FROM_NODE_GROUP_LABEL })) as { items: unknown[] };
  return l.items.length;
}

describe('refused at admission, naming the field', () => {
  test.each(REFUSED.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-ng');
    const a = await admit.nodeGroup(name, c.spec(valid()), { store: true });
    if (a.code === 201) stored.push(name);
    expect(a.code).toBe(422);
    const said = refusalText(a);
    expect(said).toContain(c.field);
    expect(said).toContain(c.words);
    await g.untouched(m);
  });
});

describe('accepted, reported in status and an Event, nothing made', () => {
  test('an observer pointed at a node group that does not exist: NodeGroupUnreadable, naming it', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-ng');
    const missing = uniqueName('no-such-group');
    const before = await requestsMade();
    const a = await admit.nodeGroup(name, { ...valid(), template: { ...valid().template, nodeGroupName: missing } }, { store: true });
    expect(a.code).toBe(201);
    stored.push(name);
    const o = await waitFor('the status', async () => {
      const x = (await custom().getClusterCustomObject({ ...ref, name })) as NodeGroupObject;
      return x.status?.conditions?.find((c) => c.reason === 'NodeGroupUnreadable') ? x : undefined;
    }, { timeoutMs: 30_000, intervalMs: 300 });
    expect(o.status!.message).toContain(`unknown node group ${missing}`);
    const events = (await g.f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })).items;
    expect(events.map((e) => `${e.type}/${e.reason}`)).toContain('Warning/NodeGroupUnreadable');
    expect(await requestsMade()).toBe(before);
    await g.untouched(m);
  });

  test('the CLI: `cycle <NodeGroup>` whose template selects no node refuses in one line and creates nothing', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-ng');
    const a = await admit.nodeGroup(name, { ...valid(), template: { ...valid().template, selector: { matchLabels: { [NODE_GROUP_LABEL]: 'nothing-here' } } }, driftObserver: undefined }, { store: true });
    expect(a.code).toBe(201);
    stored.push(name);
    const before = await requestsMade();
    const r = await cli(['cycle', name, '--no-follow'], env());
    expectOneLineError(r, `NodeGroup ${name}: no node has ${NODE_GROUP_LABEL}=nothing-here; nothing created`);
    expect(await requestsMade()).toBe(before);
    await g.untouched(m);
  });
});
