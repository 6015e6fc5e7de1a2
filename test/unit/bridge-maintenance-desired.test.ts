// The NodeMaintenance reconciler's decisions as pure functions (starter/bridge/maintenance-*.ts):
// the invalid-spec report (NM-4.7), the status mirror of maintenanceStatus (spec §1, NM-1.8/1.9),
// its Events, what goes to the workflow as specChanged (NM-2.14, NM-2.16, NM-4.8), and deletion
// (NM-2.11–2.13). No cluster, no Temporal.
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { MAINTENANCE_FINALIZER } from '../../api/node-maintenance.js';
import { desiredMaintenance, orphanedMaintenances, specChangeToSend, type MaintenanceWorkflowView } from '../../starter/bridge/maintenance/desired.js';
import type { NodeMaintenanceObject } from '../../starter/bridge/maintenance/objects.js';
import { closedMaintenance, isMaintenanceStatus, maintenanceCompleted, maintenanceEvents, maintenanceObjectStatus } from '../../starter/bridge/maintenance/status.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { ALLOW_ALL_NODES_ANNOTATION } from '../../api/names.js';

const now = new Date('2026-01-01T00:00:00Z');
const later = new Date('2026-01-01T00:05:00Z');
const WF = 'nm/m1/uid-1';
const selector = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }] };

const nm = (over: Partial<NodeMaintenanceObject['metadata']> = {}, rest: Partial<NodeMaintenanceObject> = {}): NodeMaintenanceObject => ({
  apiVersion: 'slipway.dev/v1alpha1',
  kind: 'NodeMaintenance',
  metadata: { name: 'm1', uid: 'uid-1', generation: 1, ...over },
  spec: { nodeSelector: selector, stage: 'Idle', reason: 'kernel upgrade' },
  ...rest,
});

const counts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };
const state = (over: Partial<MaintenanceStatus> = {}): MaintenanceStatus => ({
  stage: 'Idle',
  stageStatuses: [{ name: 'Idle', startTimestamp: '2026-01-01T00:00:00Z' }],
  drainPlan: [...DEFAULT_DRAIN_PLAN],
  planIndex: 0,
  selectedNodes: 2,
  nodeStatuses: [
    { nodeRef: { name: 'n1' }, drainTargets: [], drainMessage: 'idle', limitedBy: [], ...counts, podsPendingEvictionRequest: 3 },
    { nodeRef: { name: 'n2' }, drainTargets: [], drainMessage: 'idle', limitedBy: [], ...counts },
  ],
  nodeStatusesOmitted: 0,
  drainStatus: { reachedDrainTargets: [], drainMessage: '', ...counts, podsPendingEvictionRequest: 3 },
  conditions: [
    { type: 'Ready', status: 'True', reason: 'Active', message: 'idle: nothing touched' },
    { type: 'Drained', status: 'False', reason: 'NotDraining', message: 'not draining' },
  ],
  message: 'Idle: 2 nodes selected, nothing touched',
  observedGeneration: 1,
  completed: false,
  ...over,
});

const wf = (over: Partial<MaintenanceWorkflowView> = {}): MaintenanceWorkflowView => ({ workflowId: WF, runId: 'run-1', generation: 1, ...over });

describe('NM-4.7 an invalid spec', () => {
  const bad = nm({}, { spec: { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'bad key!', operator: 'Bogus' }] }] }, stage: 'Sideways' } });

  test('gets Ready=False InvalidSpec listing every problem, one Warning Event, and no workflow', () => {
    const d = desiredMaintenance({ obj: bad, workflow: undefined, now });
    expect(d.invalidSpec).toMatch(/^invalid spec: /);
    expect(d.invalidSpec).toContain('spec.stage');
    expect(d.invalidSpec).toContain('spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator');
    const ready = d.status?.next.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: d.invalidSpec, observedGeneration: 1 });
    expect(d.status?.next.message).toBe(d.invalidSpec);
    expect(d.events.map((e) => `${e.type}/${e.reason}`)).toEqual(['Warning/InvalidSpec']);
    expect(d.deletion).toEqual({ kind: 'none' });
  });

  test('once written, is neither written nor reported again', () => {
    const first = desiredMaintenance({ obj: bad, workflow: undefined, now });
    const again = desiredMaintenance({ obj: { ...bad, status: first.status!.next }, workflow: undefined, now: later });
    expect(again.status).toBeUndefined();
    expect(again.events).toEqual([]);
    expect(again.invalidSpec).toBe(first.invalidSpec);
  });

  test('a valid spec without a workflow writes nothing (the reconciler starts one)', () => {
    const d = desiredMaintenance({ obj: nm(), workflow: undefined, now });
    expect(d).toEqual({ events: [], deletion: { kind: 'none' } });
  });
});

describe('status mirrors maintenanceStatus', () => {
  test('every field of spec §1, with the workflow and the generation it was sent', () => {
    const s = state();
    const d = desiredMaintenance({ obj: nm(), workflow: wf({ state: s }), now });
    const next = d.status!.next;
    expect(next).toMatchObject({
      workflowId: WF,
      runId: 'run-1',
      observedGeneration: 1,
      selectedNodes: 2,
      message: s.message,
      drainPlan: s.drainPlan,
      stageStatuses: s.stageStatuses,
      drainStatus: s.drainStatus,
      nodeStatuses: s.nodeStatuses,
      nodeStatusesOmitted: 0,
    });
    expect(next.conditions).toEqual([
      { type: 'Ready', status: 'True', reason: 'Active', message: 'idle: nothing touched', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 },
      { type: 'Drained', status: 'False', reason: 'NotDraining', message: 'not draining', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 },
    ]);
  });

  test('a multi-line workflow message is mirrored as its first line (status.message is one line)', () => {
    const next = maintenanceObjectStatus({ prev: undefined, workflow: { workflowId: WF }, state: state({ message: 'first\n* second' }), observedGeneration: 1, now });
    expect(next.message).toBe('first');
  });

  test('NM-1.8 a condition keeps its lastTransitionTime while its status stays, and moves when it changes', () => {
    const first = maintenanceObjectStatus({ prev: undefined, workflow: { workflowId: WF }, state: state(), observedGeneration: 1, now });
    const draining = state({
      stage: 'Drain',
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Active', message: 'draining' },
        { type: 'Drained', status: 'False', reason: 'Draining', message: 'Drain: 2 pods left' },
      ],
    });
    const second = maintenanceObjectStatus({ prev: first, workflow: { workflowId: WF }, state: draining, observedGeneration: 2, now: later });
    expect(second.conditions?.find((c) => c.type === 'Drained')).toMatchObject({ reason: 'Draining', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 2 });
    const drained = state({ conditions: [{ type: 'Drained', status: 'True', reason: 'Drained', message: 'every node drained' }] });
    const third = maintenanceObjectStatus({ prev: second, workflow: { workflowId: WF }, state: drained, observedGeneration: 2, now: later });
    expect(third.conditions?.find((c) => c.type === 'Drained')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:05:00Z' });
    // Conditions the workflow did not repeat are kept.
    expect(third.conditions?.find((c) => c.type === 'Ready')?.message).toBe('draining');
  });

  test('before the first answer: a note that the workflow started; after, the last answer is kept', () => {
    const d = desiredMaintenance({ obj: nm(), workflow: wf(), now });
    expect(d.status!.next).toEqual({ workflowId: WF, runId: 'run-1', observedGeneration: 1, message: `workflow ${WF} started` });
    const mirrored = desiredMaintenance({ obj: nm(), workflow: wf({ state: state() }), now }).status!.next;
    const restarted = desiredMaintenance({ obj: nm({}, { status: mirrored }), workflow: wf({ runId: undefined }), now: later });
    expect(restarted.status).toBeUndefined();
  });

  test('the same answer again writes nothing and records no Event', () => {
    const first = desiredMaintenance({ obj: nm(), workflow: wf({ state: state() }), now });
    const again = desiredMaintenance({ obj: nm({}, { status: first.status!.next }), workflow: wf({ state: state() }), now: later });
    expect(again.status).toBeUndefined();
    expect(again.events).toEqual([]);
  });

  test("an invalid spec's report is replaced by the workflow's status once one runs", () => {
    const invalid = desiredMaintenance({ obj: nm({}, { spec: { nodeSelector: {}, stage: 'Nope' } }), workflow: undefined, now }).status!.next;
    const d = desiredMaintenance({ obj: nm({ generation: 2 }, { status: invalid }), workflow: wf({ generation: 2, state: state() }), now: later });
    expect(d.status!.next.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Active', lastTransitionTime: '2026-01-01T00:05:00Z' });
    expect(d.status!.patch.message).toBe(state().message);
  });

  test('a workflow closed without completing says so in Ready and message', () => {
    const d = desiredMaintenance({ obj: nm(), workflow: wf({ state: state(), closed: { statusName: 'TERMINATED', failure: 'by test' } }), now });
    expect(d.status!.next.message).toBe(`workflow ${WF} terminated: by test`);
    expect(d.status!.next.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'WorkflowClosed' });
  });

  test("a completed workflow's MaintenanceStatus result is its last word", () => {
    const done = state({ stage: 'Complete', completed: true, message: 'Complete: 2 nodes uncordoned' });
    expect(isMaintenanceStatus(done)).toBe(true);
    expect(closedMaintenance({ statusName: 'COMPLETED', result: done }, state(), WF)).toEqual({ state: done });
    const d = desiredMaintenance({ obj: nm(), workflow: wf({ state: state(), closed: { statusName: 'COMPLETED', result: done } }), now });
    expect(d.status!.next.message).toBe('Complete: 2 nodes uncordoned');
  });
});

describe('Events from status transitions', () => {
  const mirrored = (s: MaintenanceStatus, prev?: ReturnType<typeof maintenanceObjectStatus>) =>
    maintenanceObjectStatus({ prev, workflow: { workflowId: WF }, state: s, observedGeneration: 1, now });

  test('NM-2.14 StageStarted names each newly started stage and spec.reason, once', () => {
    const idle = mirrored(state());
    expect(maintenanceEvents(undefined, idle, 'kernel upgrade')).toEqual([
      { type: 'Normal', reason: 'StageStarted', message: 'stage Idle started: kernel upgrade', dedup: `${WF}/StageStarted/Idle` },
    ]);
    const drain = mirrored(state({ stage: 'Drain', stageStatuses: [...state().stageStatuses, { name: 'Drain', startTimestamp: '2026-01-01T00:01:00Z' }] }), idle);
    expect(maintenanceEvents(idle, drain, 'kernel upgrade').map((e) => e.message)).toEqual(['stage Drain started: kernel upgrade']);
    expect(maintenanceEvents(drain, drain, 'kernel upgrade')).toEqual([]);
  });

  test('#14 §4 a stage started by setStage names its caller in the Event', () => {
    const idle = mirrored(state());
    const cordon = mirrored(state({ stage: 'Cordon', stageStatuses: [...state().stageStatuses, { name: 'Cordon', startTimestamp: '2026-01-01T00:01:00Z', requestedBy: 'alice@ops-box' }] }), idle);
    expect(cordon.stageStatuses?.at(-1)).toMatchObject({ name: 'Cordon', requestedBy: 'alice@ops-box' });
    expect(maintenanceEvents(idle, cordon, 'kernel').map((e) => e.message)).toEqual(['stage Cordon started: kernel (setStage by alice@ops-box)']);
  });

  test('#24.8 StageStarted names the reason the workflow acts on (a setStage --reason), not the cached spec.reason it replaced', () => {
    const prev = mirrored(state());
    const cordon = state({ stage: 'Cordon', reason: 'firmware', stageStatuses: [...state().stageStatuses, { name: 'Cordon', startTimestamp: '2026-01-01T00:01:00Z', requestedBy: 'alice@ops-box' }] });
    // The cache may still hold the object from before setStage's write (spec.reason 'kernel upgrade').
    const d = desiredMaintenance({ obj: nm({}, { status: prev }), workflow: wf({ state: cordon }), now });
    expect(d.events.map((e) => e.message)).toEqual(['stage Cordon started: firmware (setStage by alice@ops-box)']);
  });

  test('NM-1.8 Drained is recorded when the condition turns True, not while it stays', () => {
    const draining = mirrored(state({ conditions: [{ type: 'Drained', status: 'False', reason: 'Draining', message: 'draining' }] }));
    const drained = mirrored(state({ conditions: [{ type: 'Drained', status: 'True', reason: 'Drained', message: 'every selected node is drained' }] }), draining);
    expect(maintenanceEvents(draining, drained, undefined).filter((e) => e.reason === 'Drained')).toEqual([
      { type: 'Normal', reason: 'Drained', message: 'every selected node is drained', dedup: `${WF}/Drained` },
    ]);
    expect(maintenanceEvents(drained, drained, undefined)).toEqual([]);
  });

  test('NM-4.8 SelectsAllNodes is a Warning when it blocks, and not when acknowledged', () => {
    const blocked = mirrored(
      state({ conditions: [{ type: 'SelectsAllNodes', status: 'True', reason: 'SelectsAllNodes', message: 'selects all 12 nodes; the cluster may become degraded and unrecoverable' }] }),
    );
    const evs = maintenanceEvents(undefined, blocked, undefined).filter((e) => e.reason === 'SelectsAllNodes');
    expect(evs).toEqual([{ type: 'Warning', reason: 'SelectsAllNodes', message: 'selects all 12 nodes; the cluster may become degraded and unrecoverable', dedup: `${WF}/SelectsAllNodes/Idle` }]);
    expect(maintenanceEvents(blocked, blocked, undefined)).toEqual([]);
    const acked = mirrored(state({ conditions: [{ type: 'SelectsAllNodes', status: 'True', reason: 'Acknowledged', message: 'acknowledged' }] }), blocked);
    expect(maintenanceEvents(blocked, acked, undefined)).toEqual([]);
  });

  test("a previous workflow's status does not suppress the new one's Events", () => {
    const old = { ...mirrored(state()), workflowId: 'nm/m1/old-uid' };
    expect(maintenanceEvents(old, mirrored(state()), undefined).map((e) => e.reason)).toEqual(['StageStarted']);
  });
});

describe('what goes to the workflow as specChanged', () => {
  test('NM-2.14 a new generation is sent; the same one is not', () => {
    expect(specChangeToSend(nm({ generation: 2 }), wf({ generation: 1 }), false)).toEqual({ generation: 2, allowAllNodes: false, newGeneration: true });
    expect(specChangeToSend(nm({ generation: 1 }), wf({ generation: 1 }), false)).toBeUndefined();
  });

  test('NM-4.8 adding the allow-all-nodes annotation is sent without a new generation', () => {
    const acked = nm({ annotations: { [ALLOW_ALL_NODES_ANNOTATION]: 'true' } });
    expect(specChangeToSend(acked, wf(), false)).toEqual({ generation: 1, allowAllNodes: true, newGeneration: false });
    expect(specChangeToSend(acked, wf(), true)).toBeUndefined();
    // After a bridge restart nothing is known to have been sent: the acknowledgement is sent once more.
    expect(specChangeToSend(acked, wf(), undefined)).toMatchObject({ allowAllNodes: true });
    expect(specChangeToSend(nm(), wf(), undefined)).toBeUndefined();
  });

  test('nothing is sent to a closed workflow', () => {
    expect(specChangeToSend(nm({ generation: 3 }), wf({ closed: { statusName: 'COMPLETED' } }), false)).toBeUndefined();
  });
});

describe('deletion', () => {
  const deleting = (finalizers: string[], spec: Record<string, unknown> = { nodeSelector: selector, stage: 'Drain' }) =>
    nm({ deletionTimestamp: new Date('2026-01-01T00:10:00Z'), finalizers }, { spec });

  test('NM-2.11 without our finalizer (Idle): the workflow is told, nothing is written', () => {
    const d = desiredMaintenance({ obj: deleting(['other.example/keep']), workflow: wf({ state: state() }), now });
    expect(d).toEqual({ events: [], deletion: { kind: 'tell' } });
  });

  test('NM-2.12 with our finalizer and the workflow not completed: Complete first (spec.stage patched), finalizer kept', () => {
    const d = desiredMaintenance({ obj: deleting([MAINTENANCE_FINALIZER]), workflow: wf({ state: state({ stage: 'Drain' }) }), now });
    expect(d.deletion).toEqual({ kind: 'complete', patchStage: true });
    const patched = desiredMaintenance({ obj: deleting([MAINTENANCE_FINALIZER], { nodeSelector: selector, stage: 'Complete' }), workflow: wf({ state: state({ stage: 'Complete' }) }), now });
    expect(patched.deletion).toEqual({ kind: 'complete', patchStage: false });
  });

  test('NM-2.12 once the workflow reports completed, only our finalizer is removed', () => {
    const d = desiredMaintenance({ obj: deleting(['a.example/x', MAINTENANCE_FINALIZER]), workflow: wf({ state: state({ stage: 'Complete', completed: true }) }), now });
    expect(d.deletion).toEqual({ kind: 'release', finalizers: ['a.example/x'] });
  });

  test('NM-2.13 deleted after Complete (the workflow has ended): the finalizer goes promptly', () => {
    const closed = { statusName: 'COMPLETED', result: state({ stage: 'Complete', completed: true }) };
    expect(maintenanceCompleted(undefined, closed)).toBe(true);
    const d = desiredMaintenance({ obj: deleting([MAINTENANCE_FINALIZER]), workflow: wf({ closed }), now });
    expect(d.deletion).toEqual({ kind: 'release', finalizers: [] });
  });

  test('with no workflow at all the finalizer goes (nothing can hold a node)', () => {
    expect(desiredMaintenance({ obj: deleting([MAINTENANCE_FINALIZER]), workflow: undefined, now }).deletion).toEqual({ kind: 'release', finalizers: [] });
  });

  test('a workflow that closed without completing keeps the finalizer (nodes may still be held)', () => {
    const d = desiredMaintenance({ obj: deleting([MAINTENANCE_FINALIZER]), workflow: wf({ state: state({ stage: 'Drain' }), closed: { statusName: 'FAILED', failure: 'boom' } }), now });
    expect(d.deletion).toEqual({ kind: 'stuck', why: `workflow ${WF} failed: boom` });
  });
});

test('NM-2.11 a running maintenance workflow whose object is gone is told, once older than the grace; others are left alone', () => {
  const at = (s: number) => new Date(now.getTime() - s * 1000);
  const running = [
    { workflowId: 'nm/kept/uid-live', startTime: at(600) },
    { workflowId: 'nm/gone/uid-gone', startTime: at(600) },
    { workflowId: 'nm/young/uid-young', startTime: at(5) },
    { workflowId: 'nm-node/n1/drain', startTime: at(600) },
  ];
  expect(orphanedMaintenances(running, new Set(['uid-live']), now, 60_000)).toEqual(['nm/gone/uid-gone']);
  expect(orphanedMaintenances(running, new Set(['uid-live']), now, 0)).toEqual(['nm/gone/uid-gone', 'nm/young/uid-young']);
});
