// The bridge's side of Temporal for NodeMaintenance: ../temporal.ts's kind-neutral helpers bound to
// `nodeMaintenanceWorkflow` and its messages (workflows/messages.ts).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { NodeMaintenanceSpecInput } from '../../../api/node-maintenance.js';
import { maintenanceDeletingSignal, maintenanceSpecChangedUpdate, maintenanceStatusQuery, nodeChangedSignal, previewInputsChangedSignal } from '../../../workflows/messages.js';
import type { MaintenanceInput, MaintenanceStatus, Stage } from '../../../workflows/maintenance/types.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId, parseWorkflowId } from '../../../workflows/ids.js';
import { ObjectAttr, PhaseAttr } from '../../../workflows/search-attributes.js';
import { isMaintenanceStatus } from './status.js';
import { describeWorkflow, followHistory, sendUpdate, startOnce, waitWorkflowClosed, workflowTaskFailure, type Described, type StartResult, type TrackedSource, type UpdateNotApplied } from '../temporal.js';

/** The maintenance workflow's type name (registered by the worker). */
export const MAINTENANCE_WORKFLOW_TYPE = 'nodeMaintenanceWorkflow';
/** The node coordinator's (nm-node/<node>). */
export const MAINTENANCE_NODE_WORKFLOW_TYPE = 'maintenanceNodeWorkflow';

import { maintenanceObjectAttr } from '../../../workflows/ids.js';

export interface MaintenanceSpecChange {
  spec: NodeMaintenanceSpecInput;
  generation?: number;
  allowAllNodes?: boolean;
}

export interface MaintenanceWorkflows extends TrackedSource<MaintenanceStatus> {
  /** Starts nm/<name>/<uid> once (a running one is attached to, a closed one never re-run). */
  start(input: MaintenanceInput): Promise<StartResult>;
  describe(workflowId: string): Promise<Described | undefined>;
  /** The `specChanged` update: applied (the stage now in effect) or refused (why, in the workflow's words). */
  changeSpec(workflowId: string, change: MaintenanceSpecChange): Promise<{ applied: true; stage: Stage } | UpdateNotApplied>;
  /** Signals `deleting`; false when no workflow runs under this ID (nothing to tell). */
  deleting(workflowId: string): Promise<boolean>;
  /** Signals `previewInputsChanged` (the preview feed); false when no workflow runs under this ID. */
  previewInputsChanged(workflowId: string): Promise<boolean>;
  /** Signals `nodeChanged` to the node's coordinator (the held nodes' feed); false when none runs. */
  nodeChanged(node: string): Promise<boolean>;
  /** The nodes whose coordinator runs on this bridge's task queue (at most `max`). */
  runningCoordinators(max: number): Promise<string[]>;
  /** The maintenance workflows running on this bridge's task queue (at most `max`). */
  listRunning(max: number): Promise<RunningMaintenance[]>;
}

export interface RunningMaintenance {
  workflowId: string;
  startTime: Date;
}

export function maintenanceWorkflows(client: Client, taskQueue: string): MaintenanceWorkflows {
  return {
    start(input) {
      const workflowId = maintenanceWorkflowId(input);
      return startOnce(client, MAINTENANCE_WORKFLOW_TYPE, {
        args: [input],
        workflowId,
        taskQueue,
        typedSearchAttributes: [
          { key: ObjectAttr, value: maintenanceObjectAttr(input.name) },
          { key: PhaseAttr, value: input.spec.stage ?? 'Idle' },
        ],
        staticSummary: `NodeMaintenance ${input.name}${input.spec.reason ? `: ${input.spec.reason}` : ''}`,
      });
    },

    query: (workflowId, timeoutMs) => client.withDeadline(Date.now() + timeoutMs, () => client.workflow.getHandle(workflowId).query(maintenanceStatusQuery)),

    describe: (workflowId) => describeWorkflow(client, workflowId),

    follow: (workflowId, signal) => followHistory(client, workflowId, signal),

    waitClosed: (workflowId, signal) => waitWorkflowClosed(client, workflowId, signal, (h) => h.query(maintenanceStatusQuery), isMaintenanceStatus),

    taskFailure: (workflowId) => workflowTaskFailure(client, workflowId),

    async changeSpec(workflowId, change) {
      const r = await sendUpdate(client, workflowId, maintenanceSpecChangedUpdate, [change]);
      return r.applied ? { applied: true, stage: r.result.stage } : r;
    },

    async listRunning(max) {
      const out: RunningMaintenance[] = [];
      const query = `WorkflowType = '${MAINTENANCE_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`;
      for await (const w of client.workflow.list({ query, pageSize: 100 })) {
        out.push({ workflowId: w.workflowId, startTime: w.startTime });
        if (out.length >= max) break;
      }
      return out;
    },

    deleting: (workflowId) => signalIfRunning(client, workflowId, maintenanceDeletingSignal),

    previewInputsChanged: (workflowId) => signalIfRunning(client, workflowId, previewInputsChangedSignal),

    nodeChanged: (node) => signalIfRunning(client, maintenanceNodeWorkflowId(node), nodeChangedSignal),

    async runningCoordinators(max) {
      const out: string[] = [];
      const query = `WorkflowType = '${MAINTENANCE_NODE_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`;
      for await (const w of client.workflow.list({ query, pageSize: 500 })) {
        const p = parseWorkflowId(w.workflowId);
        if (p?.kind === 'maintenanceNode') out.push(p.node);
        if (out.length >= max) break;
      }
      return out;
    },
  };
}

/** Signals a workflow; false when none runs under this ID (never started, or closed already). */
async function signalIfRunning(client: Client, workflowId: string, signal: SignalDefinition<[]>): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).signal(signal);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
