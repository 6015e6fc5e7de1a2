// Lifecycle hook annotations written wrong (api/lifecycle-hooks.ts). What the product does: a key
// the apiserver cannot store (an empty owner) is refused there; a hook written in any way that shows
// the intent to hold (value "false", Cluster API's Machine key, the owner put in the value, odd but
// valid owner names, a dozen owners) holds the drain, named in its status, with a Warning Event
// where Slipway read it differently from how it was written. Holding is the safe reading: dropping
// it would let a drain go on that its writer meant to stop. Each case starts a real drain of a guard
// node and judges from the audit log and the cluster that nothing was cordoned or evicted.
import { setTimeout as sleep } from 'node:timers/promises';
import { apiStatus } from '../../kube/client.js';
import { drainWorkflow } from '../../workflows/index.js';
import { drainStatusQuery } from '../../workflows/messages.js';
import { uniqueName } from '../support/cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';

const g = new Guard('bi-hooks');
beforeAll(() => g.setup(), 120_000);
afterAll(() => g.teardown());

const annotate = (node: string, annotations: Record<string, string | null>) => g.f.c.core.patchNode({ name: node, body: { metadata: { annotations } } }, mergePatch);
const warnings = async (node: string) =>
  (await g.f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${node},reason=LifecycleHookAnnotation` })).items.map((e) => e.message ?? '');

/**
 * Puts `annotations` on a guard node, drains it, and asserts the drain is held naming `owners`
 * (its message says `message`) and that nothing was disrupted; then ends the drain and cleans up.
 */
async function heldBy(annotations: Record<string, string>, owners: string[], message: string): Promise<string> {
  const node = g.nodes[0]!;
  await annotate(node, annotations);
  await g.remember();
  const m = await g.mark();
  const handle = await g.f.client.workflow.start(drainWorkflow, { taskQueue: g.f.taskQueue, workflowId: uniqueName('bi-hook-drain'), args: [{ nodeName: node }] });
  g.f.track(handle.workflowId);
  try {
    const held = await waitFor('the drain held by hooks', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.hooks?.length ? s : undefined;
    }, { timeoutMs: 30_000 });
    expect(held.phase).toBe('Pending');
    expect(held.hooks).toEqual(owners);
    expect(held.message).toContain(message);
    await sleep(2000);
    await g.untouched(m);
    return node;
  } finally {
    await handle.terminate().catch(() => undefined);
    await annotate(node, Object.fromEntries(Object.keys(annotations).map((k) => [k, null])));
    await g.remember();
  }
}

test('a hook key with no owner after "/" is refused by the apiserver (422): nothing is stored, nothing disrupted', async () => {
  const node = g.nodes[0]!;
  const code = await annotate(node, { 'pre-drain.hook.slipway.dev/': '' }).then(() => 200, (err: unknown) => apiStatus(err));
  expect(code).toBe(422);
  const annotations = (await g.f.c.core.readNode({ name: node })).metadata?.annotations ?? {};
  expect(Object.keys(annotations).filter((k) => k.includes('hook'))).toEqual([]);
  const m = await g.mark();
  await sleep(1000);
  await g.untouched(m);
});

test('a hook whose value is "false" still holds (the value is ignored, as in Cluster API): only removing the key releases', async () => {
  await heldBy({ 'pre-drain.hook.slipway.dev/backup': 'false' }, ['backup'], 'waiting for pre-drain hooks: backup');
});

test("Cluster API's Machine key put on the Node holds it as that owner, and a Warning Event names Slipway's key", async () => {
  const node = await heldBy({ 'pre-drain.delete.hook.machine.cluster.x-k8s.io/capi-owner': '' }, ['capi-owner'], 'waiting for pre-drain hooks: capi-owner');
  expect((await warnings(node)).some((w) => w.includes('on a Node Slipway reads pre-drain.hook.slipway.dev/capi-owner'))).toBe(true);
});

test('the prefix without "/<owner>", the owner put in the value, holds as that owner, with a Warning Event', async () => {
  const node = await heldBy({ 'pre-drain.hook.slipway.dev': 'valued-owner' }, ['valued-owner'], 'waiting for pre-drain hooks: valued-owner');
  expect((await warnings(node)).some((w) => w.includes('names no owner after "/"') && w.includes('"valued-owner"'))).toBe(true);
});

test('an owner name with capitals, dots and underscores (valid key syntax) holds, named as written', async () => {
  await heldBy({ 'pre-drain.hook.slipway.dev/Backup_Op.v2': '' }, ['Backup_Op.v2'], 'waiting for pre-drain hooks: Backup_Op.v2');
});

test('twelve owners hold; the message names three and counts the rest (bounded status)', async () => {
  const owners = Array.from({ length: 12 }, (_, i) => `owner-${String(i).padStart(2, '0')}`);
  await heldBy(Object.fromEntries(owners.map((o) => [`pre-drain.hook.slipway.dev/${o}`, ''])), owners, 'waiting for pre-drain hooks: owner-00, owner-01, owner-02 and 9 more (');
});
