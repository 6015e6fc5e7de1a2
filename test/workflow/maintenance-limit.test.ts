// #28: one NodeMaintenance holds at most `Selection.maxNodes` nodes (the worker's
// SLIPWAY_MAINTENANCE_MAX_NODES; workflows/maintenance/limit.ts). A selection over it is refused
// before anything is touched and stays refused until it shrinks; nodes joining a held selection
// past it are left out. On the real workflow code with scripted activities (test/support/fake-maintenance.ts).
import type { temporal } from '@temporalio/proto';
import { maintenanceObjectStatus } from '../../starter/bridge/maintenance/status.js';
import { maintenanceSpecChangedUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { FakeCluster, SELECTOR, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const KiB = 1024;
const ready = (s: MaintenanceStatus) => s.conditions.find((c) => c.type === 'Ready');
/** An EC2 node name of the longest common shape (as test/unit/fleet-sizes.test.ts). */
const ec2 = (prefix: string, i: number) => `ip-10-0-${Math.floor(i / 250)}-${String(i % 250).padStart(5, '0')}.${prefix}.compute.internal`;
const bytesOf = (p: temporal.api.common.v1.IPayloads | null | undefined) =>
  (p?.payloads ?? []).reduce((n, x) => n + (x.data?.length ?? 0) + Object.entries(x.metadata ?? {}).reduce((m, [k, v]) => m + k.length + (v?.length ?? 0), 0), 0);

test.concurrent('#28 a maintenance selecting more nodes than it may hold is refused before anything happens (no finalizer, no node written, no budget asked), with a Warning, and stays refused until its selection shrinks', async () => {
  const nodes = ['lim-1', 'lim-2', 'lim-3', 'lim-4', 'lim-5'];
  const fake = new FakeCluster(nodes);
  fake.maxNodes = 3;
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'lim', { stage: 'Drain' });
    const s = await maintenanceStatusWhen(h, 'refused', (x) => ready(x)?.reason === 'TooManyNodes');
    const said = 'selects 5 nodes, more than the 3 one NodeMaintenance may hold (SLIPWAY_MAINTENANCE_MAX_NODES on the worker): refused, nothing cordoned and no budget slot taken; split it into NodeMaintenances of at most 3 nodes each';
    expect(ready(s)).toMatchObject({ status: 'False', reason: 'TooManyNodes' });
    expect(ready(s)!.message).toContain(said);
    expect(s.message).toContain(`Drain: ${said}`);
    expect(s.selectedNodes).toBe(5);
    await waitFor('the Warning', async () => fake.events.find((e) => e.reason === 'TooManyNodes'));
    expect(fake.events.filter((e) => e.reason === 'TooManyNodes').map((e) => [e.type, e.message.includes(said)])).toEqual([['Warning', true]]);
    // Still too many after a node leaves: the new selection is read (the watch), still refused.
    fake.nodes.delete('lim-5');
    await maintenanceStatusWhen(h, 'refused at 4', (x) => ready(x)?.reason === 'TooManyNodes' && x.selectedNodes === 4);
    expect(fake.finalizer).toBe(false);
    expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
    expect(fake.budget.calls).toEqual([]);
    expect(fake.calls.map((c) => c.name).filter((n) => !['selectMaintenanceNodes', 'watchMaintenanceSelection', 'recordEvent'].includes(n))).toEqual([]);
    // Down to the limit: admitted, and only now is anything touched.
    fake.nodes.delete('lim-4');
    await waitFor('three nodes held', async () => ['lim-1', 'lim-2', 'lim-3'].every((n) => fake.nodes.get(n)!.heldBy.join() === 'lim'));
    const held = await maintenanceStatusWhen(h, 'Ready again', (x) => ready(x)?.reason === 'Active');
    expect(held.selectedNodes).toBe(3);
    expect(fake.finalizer).toBe(true);
  }, { workflowIds: maintenanceTestIds(['lim'], nodes) });
});

test.concurrent('#28 nodes joining a held selection past the limit are not held: the others stay, the status and a Warning say how many are left out', async () => {
  const nodes = ['grow-1', 'grow-2'];
  const fake = new FakeCluster(nodes);
  fake.maxNodes = 2;
  await env().withWorker(fake.activities(), async (tq) => {
    const h = await startMaintenance(env(), tq, 'grow', { stage: 'Cordon' });
    await waitFor('both held', async () => nodes.every((n) => fake.nodes.get(n)!.heldBy.join() === 'grow'));
    for (const n of ['grow-3', 'grow-4']) fake.nodes.set(n, { labels: {}, cordoned: false, heldBy: [] });
    const s = await maintenanceStatusWhen(h, 'left out', (x) => ready(x)?.reason === 'TooManyNodes');
    expect(ready(s)!.message).toContain('selects 4 nodes, more than the 2 one NodeMaintenance may hold (SLIPWAY_MAINTENANCE_MAX_NODES on the worker): 2 selected nodes joined past the limit and are not held');
    expect(s.nodeStatuses.map((n) => n.nodeRef.name)).toEqual(['grow-1', 'grow-2']);
    await waitFor('the Warning', async () => fake.events.find((e) => e.reason === 'TooManyNodes' && e.message.includes('2 selected nodes joined past the limit')));
    expect(fake.nodeWrites().filter((w) => w.startsWith('grow-3') || w.startsWith('grow-4'))).toEqual([]);
  }, { workflowIds: maintenanceTestIds(['grow'], ['grow-1', 'grow-2', 'grow-3', 'grow-4']) });
});

describe('#28 a refused maintenance at fleet size: its status answer, the status written and every payload in its history stay bounded', () => {
  const LIMIT = 200; // the default (activities/maintenance/select.ts DEFAULT_MAINTENANCE_MAX_NODES)
  test.each([1000, 2000, 5000])('#28 %i selected nodes, Idle then Drain', async (count) => {
    const name = `size-${count}`;
    const nodes = Array.from({ length: count }, (_, i) => ec2(name, i));
    const fake = new FakeCluster(nodes);
    fake.maxNodes = LIMIT;
    await env().withWorker(fake.activities(), async (tq) => {
      const h = await startMaintenance(env(), tq, name);
      const idle = await maintenanceStatusWhen(h, 'Idle, would be refused', (x) => x.stage === 'Idle' && ready(x)?.reason === 'TooManyNodes');
      expect(ready(idle)!.message).toContain(`selects ${count} nodes, more than the ${LIMIT} one NodeMaintenance may hold (SLIPWAY_MAINTENANCE_MAX_NODES on the worker): Cordon or Drain will be refused with nothing touched`);
      expect(idle.previewInputs).toBeUndefined(); // no preview of what will be refused, nor a name a node of what it read
      const written = (s: MaintenanceStatus) => Buffer.byteLength(JSON.stringify(maintenanceObjectStatus({ prev: undefined, workflow: { workflowId: h.workflowId }, state: s, observedGeneration: 1, now: new Date() })));
      const idleSizes = { answer: Buffer.byteLength(JSON.stringify(idle)), written: written(idle) };
      await h.executeUpdate(maintenanceSpecChangedUpdate, { args: [{ spec: { nodeSelector: SELECTOR, stage: 'Drain' }, generation: 2 }] });
      const drain = await maintenanceStatusWhen(h, 'Drain, refused', (x) => x.stage === 'Drain' && ready(x)?.reason === 'TooManyNodes');
      const drainSizes = { answer: Buffer.byteLength(JSON.stringify(drain)), written: written(drain) };
      await h.terminate('measured');
      const events = (await h.fetchHistory()).events ?? [];
      const largest = Math.max(...events.map((e) => Math.max(bytesOf(e.activityTaskScheduledEventAttributes?.input), bytesOf(e.activityTaskCompletedEventAttributes?.result), bytesOf(e.workflowExecutionStartedEventAttributes?.input))));
      console.log(`#28 figures: refused maintenance at ${count} EC2 nodes: Idle answer ${idleSizes.answer} B, written ${idleSizes.written} B; Drain answer ${drainSizes.answer} B, written ${drainSizes.written} B; largest payload in history ${largest} B`);
      expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
      expect(fake.finalizer).toBe(false);
      for (const b of [idleSizes.answer, idleSizes.written, drainSizes.answer, drainSizes.written, largest]) expect(b).toBeLessThanOrEqual(256 * KiB);
    }, { workflowIds: maintenanceTestIds([name], []) });
  }, 120_000);
});
