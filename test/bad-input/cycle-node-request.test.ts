// Bad CycleNodeRequests, aimed at a guard node group that a real bridge and worker would cycle if
// they let one through. Each case is refused at admission naming its field, or accepted and
// reported in status and a Warning Event; after each, the guard shows nothing was disrupted.
import { setTimeout as sleep } from 'node:timers/promises';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { installCrds } from '../../starter/install-crds.js';
import type { CycleNodeRequestObject } from '../../starter/bridge/cycle/objects.js';
import { admissionClient, causeFor, withSpecUnchecked } from '../support/admission.js';
import { BAD_CYCLE_REQUESTS } from '../support/bad-cycle-requests.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const g = new Guard('bi-cnr');
const admit = admissionClient(g.f.c.config);

beforeAll(async () => {
  await installCrds(g.f.c.config);
  await g.setup();
  await g.f.bridge();
}, 120_000);
afterAll(() => g.teardown());

/** The corpus spec, aimed at the guard: its node group and selector name the guard's. */
const aimed = (spec: unknown): unknown => JSON.parse(JSON.stringify(spec).replaceAll('"it-adm"', JSON.stringify(g.group)));

async function failedWith(name: string): Promise<CycleNodeRequestObject> {
  return waitFor(`${name} Failed`, async () => {
    const o = await g.f.getCnr(name);
    return o?.status?.phase === 'Failed' ? o : undefined;
  }, { timeoutMs: 60_000 });
}

/** The Warning Event on the request saying `words` (the bridge's InvalidSpec or the phase's PhaseFailed). */
async function warned(name: string, reason: string, words: string): Promise<void> {
  await waitFor(`${reason} Event on ${name}`, async () =>
    (await g.f.events(name)).some((e) => e.type === 'Warning' && e.reason === reason && (e.message ?? '').includes(words)),
  { timeoutMs: 30_000 });
}

describe('refused at admission, naming the field', () => {
  test.each(BAD_CYCLE_REQUESTS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi');
    const a = await admit.cycleRequest(g.f.ns, name, aimed(c.spec), { store: true });
    expect(a.code).toBe(422);
    expect([causeFor(a, c), a.message]).toEqual([expect.anything(), a.message]);
    expect(await g.f.getCnr(name)).toBeUndefined();
    await g.untouched(m);
  });
});

describe('accepted, then reported in status and an Event, nothing touched', () => {
  test('a node group that does not exist', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-nogroup');
    await g.f.createCnr(name, g.cnr({ nodeGroupName: `${g.group}-nope` }));
    const o = await failedWith(name);
    expect(o.status!.message).toContain(`unknown node group ${g.group}-nope`);
    await warned(name, 'PhaseFailed', `unknown node group ${g.group}-nope`);
    await g.untouched(m);
  });

  test('a selector that matches no node', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-nonode');
    await g.f.createCnr(name, g.cnr({ selector: { matchLabels: { [NODE_GROUP_LABEL]: g.group, pool: 'none' } } }));
    const o = await failedWith(name);
    expect(o.status!.message).toContain(`selector pool=none,${NODE_GROUP_LABEL}=${g.group} matches no node`);
    await warned(name, 'PhaseFailed', 'matches no node');
    await g.untouched(m);
  });

  test('a selector that matches nodes outside the named node group', async () => {
    const other = `${g.group}-b`;
    await ensureFakeNodeGroup(g.f.c.core, other, 1);
    try {
      const m = await g.mark();
      const name = uniqueName('bi-outside');
      // Names the other group, selects the guard's nodes: cycling them through the other group would
      // replace them with the wrong nodes.
      await g.f.createCnr(name, g.cnr({ nodeGroupName: other }));
      const o = await failedWith(name);
      expect(o.status!.message).toContain(`picks 2 nodes outside node group ${other}`);
      for (const n of g.nodes) expect(o.status!.message).toContain(`${n} (node group ${g.group})`);
      await warned(name, 'PhaseFailed', `outside node group ${other}`);
      await g.untouched(m);
    } finally {
      await deleteGroupNodes(g.f.c, other);
    }
  });

  test('named nodes that do not exist', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-ghosts');
    await g.f.createCnr(name, g.cnr({ nodeNames: [`${g.group}-7`, `${g.group}-8`] }));
    const o = await failedWith(name);
    expect(o.status!.message).toContain(`named nodes not found in the selection: ${g.group}-7, ${g.group}-8`);
    await warned(name, 'PhaseFailed', 'named nodes not found');
    await g.untouched(m);
  });

  test('a name at the length limit (253 characters): status and Event are written all the same', async () => {
    const m = await g.mark();
    const name = `bi-${'n'.repeat(250)}`;
    expect(name).toHaveLength(253);
    await g.f.createCnr(name, g.cnr({ nodeGroupName: `${g.group}-nope` }));
    const o = await failedWith(name);
    expect(o.status!.message).toContain(`unknown node group ${g.group}-nope`);
    await warned(name, 'PhaseFailed', `unknown node group ${g.group}-nope`);
    await g.untouched(m);
  });

  test('a request stored before admission checked it (an upgrade): InvalidSpec, no workflow, no finalizer', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-stored');
    await withSpecUnchecked(g.f.c.config, 'CycleNodeRequest', () => g.f.createCnr(name, g.cnr({ cycleSettings: { cyclingTimeout: '0s', concurrency: 0 } })));
    const o = await failedWith(name);
    expect(o.status!.message).toContain('spec.cycleSettings.cyclingTimeout: "0s" must be a duration between 1m and 168h');
    expect(o.status!.message).toContain('spec.cycleSettings.concurrency');
    expect(o.status!.workflowId).toBeUndefined();
    expect(o.metadata.finalizers ?? []).toEqual([]);
    await warned(name, 'InvalidSpec', 'cyclingTimeout');
    await g.untouched(m);
  }, 120_000);

  test('a spec change after the start that is not allowed is refused, naming the field; the cycle goes on as it was', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-edit');
    await g.f.createCnr(name, g.cnr({ nodeGroupName: `${g.group}-nope` }));
    await waitFor(`${name} started`, async () => (await g.f.getCnr(name))?.status?.workflowId);
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    const refused = await g.f.custom
      .patchNamespacedCustomObject({ group, version, plural, namespace: g.f.ns, name, body: { spec: { nodeGroupName: g.group } } }, mergePatch)
      .then(() => 'admitted', (err: { code?: number; body?: string }) => `${err.code} ${err.body}`);
    expect(refused).toMatch(/^422 /);
    expect(refused).toContain('spec.nodeGroupName cannot change once the cycle has started: only spec.cycleSettings.concurrency can');
    expect((await g.f.getCnr(name))!.spec).toMatchObject({ nodeGroupName: `${g.group}-nope` });
    await failedWith(name);
    await sleep(500);
    await g.untouched(m);
  });
});
