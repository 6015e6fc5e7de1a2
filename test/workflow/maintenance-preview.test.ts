// The Idle preview in the maintenance workflow (workflows/maintenance/maintenance.ts idle()), on the
// real workflow code with scripted activities (test/support/fake-maintenance.ts): the per-node
// summary replaces "Planned" in status, the maintenancePlan query answers it in full, nothing is written.
import type { NodePreview } from '../../shared/maintenance-preview.js';
import type { MaintenanceInput } from '../../workflows/maintenance/types.js';
import { nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { maintenanceDeletingSignal, maintenancePlanQuery, maintenanceRefreshPlanUpdate, maintenanceStatusQuery, previewInputsChangedSignal } from '../../workflows/messages.js';
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
    expect(fake.calls.map((c) => c.name).filter((n) => !['selectMaintenanceNodes', 'previewMaintenance'].includes(n))).toEqual([]);
    expect(fake.finalizer).toBe(false);
    for (const n of nodes) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
  }, { workflowIds: [maintenanceWorkflowId({ name: 'prev', uid: 'uid-prev' }), ...nodes.map(maintenanceNodeWorkflowId)] });
});

describe('#24.5 the Idle preview is recomputed on the changes that matter, says when, and `plan` gets a fresh one', () => {
  test.concurrent('the bridge\'s previewInputsChanged signal recomputes it at once; refreshPlan answers a preview computed after the ask; waiting runs no activity and no timer', async () => {
    const nodes = ['fresh-1'];
    const fake = new FakeCluster(nodes);
    await env().withWorker(fake.activities(), async (tq) => {
      const input: MaintenanceInput = { name: 'fresh', uid: 'uid-fresh', createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR }, generation: 1 };
      const h = await env().client.workflow.start(nodeMaintenanceWorkflow, { taskQueue: tq, workflowId: maintenanceWorkflowId(input), args: [input], workflowExecutionTimeout: '2 minutes' });
      const previews = (n: number) => waitFor(`preview #${n}`, async () => fake.callsOf('previewMaintenance').length >= n && (await h.query(maintenancePlanQuery)).preview?.computedAt, { timeoutMs: 30_000, intervalMs: 50 });
      // The status query tells the bridge what the preview read: the selected nodes with the activity's inputs.
      const s = await waitFor('preview inputs in status', async () => (await h.query(maintenanceStatusQuery)).previewInputs && (await h.query(maintenanceStatusQuery)), { timeoutMs: 30_000, intervalMs: 50 });
      expect(s.previewInputs).toEqual({ ...fake.previewInputs, nodes });
      const first = (await h.query(maintenancePlanQuery)).preview!;
      expect(Date.parse(first.computedAt)).not.toBeNaN();
      expect(s.message).toBe(`Idle: 1 node selected; nothing touched; preview computed at ${first.computedAt}`);

      // Waiting: no activity runs (nothing is scheduled beyond the first selection and preview).
      await new Promise((r) => setTimeout(r, 1_500));
      const scheduled = async () => (await h.fetchHistory()).events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
      expect(await scheduled()).toEqual(['selectMaintenanceNodes', 'maintenanceBudgetFit', 'previewMaintenance']);
      expect((await h.describe()).raw.pendingActivities ?? []).toEqual([]);

      // The bridge's feed signals a change (a pod, a PDB, a DrainRule): recomputed at once.
      await h.signal(previewInputsChangedSignal);
      await previews(2);
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
      // Waiting cost no activity (a selection and a preview per refresh, nothing else) and no timer.
      const events = (await h.fetchHistory()).events!;
      expect(await scheduled()).toEqual(Array(3).fill(['selectMaintenanceNodes', 'maintenanceBudgetFit', 'previewMaintenance']).flat());
      expect(events.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
    }, { workflowIds: [maintenanceWorkflowId({ name: 'fresh', uid: 'uid-fresh' }), ...nodes.map(maintenanceNodeWorkflowId)] });
  });
});

describe('#26.1 an Idle maintenance costs no history while nothing changes', () => {
  test.concurrent('#26.1 an Idle maintenance costs no history while nothing changes: its wait starts no timer, so nothing is added until a change (the bridge\'s signal) comes', async () => {
    const nodes = ['quiet-1'];
    const fake = new FakeCluster(nodes);
    await env().withWorker(fake.activities(), async (tq) => {
      const input: MaintenanceInput = { name: 'quiet', uid: 'uid-quiet', createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR }, generation: 1 };
      const h = await env().client.workflow.start(nodeMaintenanceWorkflow, { taskQueue: tq, workflowId: maintenanceWorkflowId(input), args: [input], workflowExecutionTimeout: '2 minutes' });
      const events = async () => (await h.fetchHistory()).events!;
      /**
       * The history once the workflow waits again after `previews` previews: every activity it
       * scheduled has ended (a pass runs the budget check beside the preview, and either may end
       * last) and its last task completed.
       */
      const waiting = (previews: number) => waitFor(`waiting after preview #${previews}`, async () => {
        const ev = await events();
        const scheduled = ev.filter((e) => e.activityTaskScheduledEventAttributes).length;
        const ended = ev.filter((e) => e.activityTaskCompletedEventAttributes || e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes || e.activityTaskCanceledEventAttributes).length;
        const idle = scheduled === ended && !!ev.at(-1)?.workflowTaskCompletedEventAttributes;
        return fake.callsOf('previewMaintenance').length >= previews && idle ? ev : undefined;
      }, { timeoutMs: 30_000, intervalMs: 50 });

      // Waiting after the first preview: nothing in the history will fire later (a timer would add
      // TimerFired, a selection and a preview: 18 events per refresh), and nothing is added meanwhile.
      const first = await waiting(1);
      expect(first.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await events()).length).toBe(first.length);

      // A change the bridge's feed saw: one refresh, then quiet again, still without a timer.
      await h.signal(previewInputsChangedSignal);
      const second = await waiting(2);
      expect(second.length).toBeGreaterThan(first.length);
      expect(second.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await events()).length).toBe(second.length);

      await h.signal(maintenanceDeletingSignal);
      await h.result();
    }, { workflowIds: [maintenanceWorkflowId({ name: 'quiet', uid: 'uid-quiet' }), ...nodes.map(maintenanceNodeWorkflowId)] });
  });
});
