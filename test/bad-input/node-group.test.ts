// Bad NodeGroups (issue 15 §2), aimed at the guard's nodes with a real bridge and worker running:
// refused at admission naming the field, or accepted and reported in status with a Warning Event;
// the CLI refuses a NodeGroup whose template selects no node. After each, nothing was disrupted
// and no CycleNodeRequest was made from it.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { setKwokTemplateHash } from '../../stack/kwok/nodes.js';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { FROM_NODE_GROUP_LABEL, NODE_GROUP, type NodeGroupObject } from '../../api/node-group-kind.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient, causeFor, refusalText } from '../support/admission.js';
import { BAD_NODE_GROUPS } from '../support/bad-node-groups.js';
import { cli, expectOneLineError } from '../support/cli.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

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

/** The corpus spec, aimed at the guard: its node group and request namespace. */
const aimed = (spec: unknown): unknown => JSON.parse(JSON.stringify(spec).replaceAll('"it-adm-ns"', JSON.stringify(g.f.ns)).replaceAll('"it-adm"', JSON.stringify(g.group)));

async function requestsMade(): Promise<number> {
  const l = (await custom().listClusterCustomObject({ group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural, labelSelector: FROM_NODE_GROUP_LABEL })) as { items: unknown[] };
  return l.items.length;
}

describe('refused at admission, naming the field', () => {
  test.each(BAD_NODE_GROUPS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-ng');
    const a = await admit.nodeGroup(name, aimed(c.spec), { store: true });
    if (a.code === 201) stored.push(name);
    expect(a.code).toBe(422);
    expect([causeFor(a, c), refusalText(a)]).toEqual([expect.anything(), refusalText(a)]);
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
