// The Idle preview in the maintenance workflow (workflows/maintenance/maintenance.ts idle()), on the
// real workflow code with scripted activities (test/support/fake-maintenance.ts): the per-node
// summary replaces "Planned" in status, the maintenancePlan query answers it in full, nothing is written.
import type { NodePreview } from '../../shared/maintenance-preview.js';
import type { MaintenanceInput } from '../../workflows/maintenance/types.js';
import { nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { maintenanceDeletingSignal, maintenancePlanQuery, maintenanceRefreshPlanUpdate, maintenanceStatusQuery } from '../../workflows/messages.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { FakeCluster, SELECTOR } from '../support/fake-maintenance.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();


const DB_BLOCKED: NodePreview = {
  node: 'prev-1',
  exists: true,
  message: 'Planned: 2 pods in 2 entries, 1 skipped, 1 kept; blocked now: app/db-0 (PDB db)',
  evict: 2,
  entries: 2,
  waitCompleted: 0,
  skipped: 1,
  kept: 1,
  blocked: 1,
  pods: [
    { pod: 'app/web-0', entry: 0, wave: 0, action: 'Evict', reason: 'default' },
    { pod: 'app/db-0', entry: 1, wave: 0, action: 'Evict', reason: 'default', blockedBy: ['db'] },
    { pod: 'app/pinned', entry: 0, wave: 0, action: 'Skip', reason: 'label slipway.dev/drain=skip' },
    { pod: 'kube-system/agent', entry: 4, wave: 0, action: 'Skip', kept: true, reason: 'DaemonSet pod without evacuator: left for node shutdown' },
  ],
  podsOmitted: 0,
  errors: [],
};

test.concurrent('NM-2.2 Idle previews the drain: the per-node summary replaces "Planned" with counts, maintenancePlan answers it in full, and nothing is written', async () => {
  const nodes = ['prev-1', 'prev-2'];
  const fake = new FakeCluster(nodes);
  fake.previews.set('prev-1', DB_BLOCKED);
  await env().withWorker(fake.activities(), async (tq) => {
    const input: MaintenanceInput = { name: 'prev', uid: 'uid-prev', createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR, drain: { evictionConcurrency: 3 } }, generation: 1 };
    const h = await env().client.workflow.start(nodeMaintenanceWorkflow, { taskQueue: tq, workflowId: maintenanceWorkflowId(input), args: [input], workflowExecutionTimeout: '2 minutes' });
    const s = await waitFor('the preview in status', async () => {
      const x = await h.query(maintenanceStatusQuery);
      return x.nodeStatuses.length === 2 && x.nodeStatuses[0]!.drainMessage.startsWith('Planned:') && x;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(s.stage).toBe('Idle');
    expect(s.nodeStatuses.map((n) => [n.nodeRef.name, n.drainMessage, n.podsPendingEvictionRequest, n.podsKept, n.activeEvictionRequests])).toEqual([
      ['prev-1', DB_BLOCKED.message, 2, 1, 0],
      ['prev-2', 'Planned: no pod to evict, 0 skipped, 0 kept', 0, 0, 0],
    ]);

    const plan = await h.query(maintenancePlanQuery);
    expect(plan.stage).toBe('Idle');
    expect(plan.plan).toHaveLength(12);
    expect(plan.preview?.nodes.map((n) => n.node)).toEqual(nodes);
    expect(plan.preview?.nodes[0]).toEqual(DB_BLOCKED);

    // The activity got the selected nodes, the effective plan and spec.drain.
    const call = fake.callsOf('previewMaintenance')[0]!.input as { nodes: string[]; plan: unknown[]; options?: unknown; previous?: string };
    expect(call).toMatchObject({ nodes, options: { evictionConcurrency: 3 } });
    expect(call.plan).toEqual(plan.plan);
    expect(call.previous).toBeUndefined();

    await h.signal(maintenanceDeletingSignal);
    await h.result();
    expect(fake.calls.map((c) => c.name).filter((n) => !['selectMaintenanceNodes', 'previewMaintenance', 'watchPreviewInputs'].includes(n))).toEqual([]);
    expect(fake.finalizer).toBe(false);
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: [maintenanceWorkflowId({ name: 'prev', uid: 'uid-prev' }), ...nodes.map(maintenanceNodeWorkflowId)] });
});

describe('#24.5 the Idle preview is recomputed on the changes that matter, says when, and `plan` gets a fresh one', () => {
  test.concurrent('a change the watch reports recomputes it at once; refreshPlan answers a preview computed after the ask; waiting sets no timer', async () => {
    const nodes = ['fresh-1'];
    const fake = new FakeCluster(nodes);
    await env().withWorker(fake.activities(), async (tq) => {
      const input: MaintenanceInput = { name: 'fresh', uid: 'uid-fresh', createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR }, generation: 1 };
      const h = await env().client.workflow.start(nodeMaintenanceWorkflow, { taskQueue: tq, workflowId: maintenanceWorkflowId(input), args: [input], workflowExecutionTimeout: '2 minutes' });
      const watching = (n: number) => waitFor(`watch #${n}`, async () => fake.callsOf('watchPreviewInputs').length >= n, { timeoutMs: 30_000, intervalMs: 50 });
      await watching(1);
      const first = (await h.query(maintenancePlanQuery)).preview!;
      expect(Date.parse(first.computedAt)).not.toBeNaN();
      const s = await h.query(maintenanceStatusQuery);
      expect(s.message).toBe(`Idle: 1 node selected; nothing touched; preview computed at ${first.computedAt}`);
      // The watch is given where the preview read (its hint), the selected nodes and the selector.
      expect(fake.callsOf('watchPreviewInputs')[0]!.input).toMatchObject({ nodes, nodeSelector: SELECTOR, maxMs: 60_000, hint: fake.watchHint });

      // A change (a pod, a PDB, a DrainRule): recomputed, and watched again.
      fake.changed();
      await watching(2);
      expect(fake.callsOf('previewMaintenance')).toHaveLength(2);
      const second = (await h.query(maintenancePlanQuery)).preview!;
      expect(second.computedAt > first.computedAt).toBe(true);

      // `plan`: the update answers a preview computed after it asked.
      const asked = new Date().toISOString();
      const fresh = await h.executeUpdate(maintenanceRefreshPlanUpdate);
      expect(fresh.stage).toBe('Idle');
      expect(fresh.preview!.computedAt >= asked).toBe(true);
      expect(fake.callsOf('previewMaintenance')).toHaveLength(3);

      await h.signal(maintenanceDeletingSignal);
      await h.result();
      // Waiting cost no timer: the watch activity waited (old: a timer per refresh, polling).
      const events = (await h.fetchHistory()).events!;
      expect(events.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
    }, { workflowIds: [maintenanceWorkflowId({ name: 'fresh', uid: 'uid-fresh' }), ...nodes.map(maintenanceNodeWorkflowId)] });
  });
});
