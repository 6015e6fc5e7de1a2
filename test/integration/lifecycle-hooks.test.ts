// Lifecycle hooks on the local stack (api/lifecycle-hooks.ts): a cycle of a kwok node carrying a
// pre-drain and a pre-terminate hook. Judged from the apiserver's audit log and the cluster: no
// eviction while the pre-drain hook is on the node, no delete of the Node while the pre-terminate
// hook is; each step follows its hook's removal. Status and Events name the owner meanwhile.
import { hookAnnotation } from '../../api/lifecycle-hooks.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { auditMark, readAuditSince } from '../../stack/audit-log.js';
import { cycleStatusQuery } from '../../workflows/messages.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunning, type AuditEvent } from '../support/cluster.js';
import { CycleFixture } from '../support/cycle.js';
import { evictionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new CycleFixture('it-hooks');
beforeAll(() => f.setup());
afterAll(() => f.teardown());

const appEvictions = (events: AuditEvent[]) => evictionsOf(events).filter((e) => e.objectRef?.namespace === f.ns);
const nodeDeletes = (events: AuditEvent[], node: string) => events.filter((e) => e.objectRef?.resource === 'nodes' && e.objectRef.name === node && e.verb === 'delete' && e.responseStatus?.code === 200);
const setAnnotation = (node: string, key: string, value: string | null) => f.c.core.patchNode({ name: node, body: { metadata: { annotations: { [key]: value } } } }, mergePatch);
const nodeEvents = async (node: string, reason: string) =>
  (await f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${node},reason=${reason}` })).items.map((e) => e.message);

test('a pre-drain hook holds every eviction and a pre-terminate hook the Node delete and the termination, each until its owner removes it; status and Events name them', async () => {
  const [node] = await ensureFakeNodeGroup(f.c.core, f.group, 1);
  await setAnnotation(node!, hookAnnotation('pre-drain', 'backup-operator'), '');
  await setAnnotation(node!, hookAnnotation('pre-terminate', 'snapshotter'), 'in progress');
  await f.app(2, 1);
  await waitFor('2 app pods Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter(isRunning).length === 2);
  const mark = await auditMark();
  const handle = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 1 } });
  const nodeStatus = (pred: (n: CycleStatus['nodes'][number]) => boolean, what: string) =>
    waitFor(what, async () => (await handle.query(cycleStatusQuery)).nodes.find((n) => n.nodeName === node && pred(n)), { timeoutMs: 90_000 });

  // 1. Held before the drain: the status names the owner, an Event says so, nothing is evicted.
  const held = await nodeStatus((n) => n.phase === 'DrainingPods' && (n.drainMessage ?? '').startsWith('waiting for pre-drain hooks: backup-operator'), 'the drain held by the pre-drain hook');
  expect(held.drainMessage).toContain(`Node ${node} has annotations pre-drain.hook.slipway.dev/<owner>`);
  expect(await waitFor('the WaitingForPreDrainHooks Event', async () => (await nodeEvents(node!, 'WaitingForPreDrainHooks')).at(0))).toContain('waiting for pre-drain hooks: backup-operator');
  await sleep(3000);
  expect(appEvictions(await readAuditSince(mark))).toEqual([]);
  const onNode = (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => isRunning(p) && p.spec?.nodeName === node);
  expect(onNode).toHaveLength(2);

  // 2. Released: the drain goes on (evictions, all after the removal), then held before the delete.
  const drainReleasedAt = new Date();
  await setAnnotation(node!, hookAnnotation('pre-drain', 'backup-operator'), null);
  const holding = await nodeStatus((n) => n.phase === 'DeletingNode' && (n.message ?? '').startsWith('waiting for pre-terminate hooks: snapshotter'), 'the delete held by the pre-terminate hook');
  expect(holding.message).toContain(`Node ${node} has annotations pre-terminate.hook.slipway.dev/<owner>`);
  expect(await waitFor('the WaitingForPreTerminateHooks Event', async () => (await nodeEvents(node!, 'WaitingForPreTerminateHooks')).at(0))).toContain('waiting for pre-terminate hooks: snapshotter');
  await sleep(3000);
  let audit = await readAuditSince(mark);
  const evictions = appEvictions(audit);
  expect(evictions.length).toBeGreaterThanOrEqual(2);
  expect(evictions.filter((e) => new Date(e.requestReceivedTimestamp) < drainReleasedAt)).toEqual([]);
  expect(nodeDeletes(audit, node!)).toEqual([]);
  expect((await f.c.core.readNode({ name: node! })).metadata?.deletionTimestamp).toBeUndefined();

  // 3. Released: the Node goes (kwok's terminate is its delete), after the removal, once.
  const terminateReleasedAt = new Date();
  await setAnnotation(node!, hookAnnotation('pre-terminate', 'snapshotter'), null);
  const result = await handle.result();
  expect(result.phase).toBe('Successful');
  expect(result.nodes.find((n) => n.nodeName === node)?.phase).toBe('Successful');
  audit = await readAuditSince(mark);
  expect(nodeDeletes(audit, node!).length).toBeGreaterThanOrEqual(1);
  expect(nodeDeletes(audit, node!).filter((e) => new Date(e.requestReceivedTimestamp) < terminateReleasedAt)).toEqual([]);
  await expect(f.c.core.readNode({ name: node! })).rejects.toThrow();
}, 240_000);
