// A stand-in maintenance workflow for the bridge's tests: a real Temporal workflow registered under
// the real type name (nodeMaintenanceWorkflow), speaking the real messages (maintenanceStatus,
// specChanged, setStage, deleting), whose answers the test scripts. It touches no node: it lets the
// tests drive what the bridge must mirror, at the moment they choose, without the stage machine.
import { condition, defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import { DEFAULT_DRAIN_PLAN } from '../../../api/drain-plan.js';
import { maintenanceDeletingSignal, maintenanceSpecChangedUpdate, maintenanceStatusQuery, setStageUpdate } from '../../../workflows/messages.js';
import { isStage, stageRank, type MaintenanceInput, type MaintenanceStatus, type Stage } from '../../../workflows/maintenance/types.js';

/** Merged into the status the maintenanceStatus query answers. */
export const scriptMaintenanceSignal = defineSignal<[Partial<MaintenanceStatus>]>('scriptMaintenance');
/** While held, Complete does not finish (completed stays false): the test releases it. */
export const scriptHoldSignal = defineSignal<[boolean]>('scriptHold');
/** Every specChanged/setStage/deleting it received, in order (what the bridge sent). */
export const receivedQuery = defineQuery<Received[]>('received');

export type Received =
  | { kind: 'start'; input: MaintenanceInput }
  | { kind: 'specChanged'; stage?: string; generation?: number; allowAllNodes?: boolean; refused?: string }
  | { kind: 'setStage'; stage: string; reason?: string; requestedBy?: string }
  | { kind: 'deleting' };

const counts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };

export async function nodeMaintenanceWorkflow(input: MaintenanceInput): Promise<MaintenanceStatus> {
  const received: Received[] = [{ kind: 'start', input }];
  let deleting = input.deleting ?? false;
  let held = false;
  const startStage: Stage = isStage(input.spec.stage) ? input.spec.stage : 'Idle';
  let status: MaintenanceStatus = {
    stage: startStage,
    stageStatuses: [{ name: startStage, startTimestamp: new Date().toISOString() }],
    drainPlan: [...DEFAULT_DRAIN_PLAN],
    planIndex: 0,
    selectedNodes: 0,
    nodeStatuses: [],
    nodeStatusesOmitted: 0,
    drainStatus: { reachedDrainTargets: [], drainMessage: '', ...counts },
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Active', message: `scripted maintenance ${input.name}` },
      { type: 'Drained', status: 'False', reason: 'NotDraining', message: 'not draining' },
    ],
    message: `${startStage}: scripted maintenance ${input.name}`,
    observedGeneration: input.generation,
    completed: false,
  };
  const enter = (stage: Stage) => {
    if (stage === status.stage) return;
    status = { ...status, stage, stageStatuses: [...status.stageStatuses, { name: stage, startTimestamp: new Date().toISOString() }], message: `${stage}: scripted` };
  };
  setHandler(maintenanceStatusQuery, () => status);
  setHandler(receivedQuery, () => received);
  setHandler(scriptMaintenanceSignal, (s) => {
    status = { ...status, ...s };
  });
  setHandler(
    maintenanceSpecChangedUpdate,
    ({ spec, generation, allowAllNodes }) => {
      received.push({ kind: 'specChanged', stage: spec.stage, generation, allowAllNodes });
      if (isStage(spec.stage)) enter(spec.stage);
      status = { ...status, observedGeneration: generation };
      return { stage: status.stage, generation };
    },
    {
      validator: ({ spec, generation, allowAllNodes }) => {
        const to = spec.stage ?? 'Idle';
        if (isStage(to) && stageRank(to) < stageRank(status.stage)) {
          const refused = `cannot go back from ${status.stage} to ${to}`;
          received.push({ kind: 'specChanged', stage: to, generation, allowAllNodes, refused });
          throw new Error(refused);
        }
      },
    },
  );
  setHandler(
    setStageUpdate,
    ({ stage, reason, requestedBy }) => {
      received.push({ kind: 'setStage', stage, reason, ...(requestedBy && { requestedBy }) });
      enter(stage as Stage);
      return { stage: status.stage };
    },
    {
      validator: ({ stage }) => {
        if (!isStage(stage)) throw new Error(`unknown stage ${stage}; one of Idle, Cordon, Drain, Complete`);
        if (stageRank(stage) < stageRank(status.stage)) throw new Error(`cannot go back from ${status.stage} to ${stage}`);
        if (deleting) throw new Error('being deleted: Complete is already in effect');
      },
    },
  );
  setHandler(scriptHoldSignal, (h) => {
    held = h;
  });
  setHandler(maintenanceDeletingSignal, () => {
    received.push({ kind: 'deleting' });
    deleting = true;
  });
  // Idle and deleted: it just ends. Otherwise Complete runs (here: at once) and it ends completed.
  await condition(() => deleting || status.stage === 'Complete');
  if (status.stage !== 'Idle' || !deleting) enter('Complete');
  await condition(() => !held);
  status = { ...status, completed: true, conditions: [...status.conditions.filter((c) => c.type !== 'Ready'), { type: 'Ready', status: 'True', reason: 'Completed', message: 'completed' }] };
  // Stay a moment so the bridge's poll sees `completed` before the close (like the real one's last report).
  await condition(() => false, '2 seconds');
  return status;
}
