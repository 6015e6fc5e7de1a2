// The bridge's side of Temporal for CycleNodeRequest: ../temporal.ts's kind-neutral helpers bound
// to the cycle workflow and its messages (workflows/messages.ts).
import type { Client } from '@temporalio/client';
import type { CycleNodeRequestSpec } from '../../../api/cycle-node-request.js';
import { nodeGroupsOf } from '../../../api/cycle-node-request.js';
import { CYCLE_WORKFLOW_TYPE, type CycleNodeStatus, type CycleRequestInput, type CycleRequestRef, type CycleStatus } from '../../../workflows/cycle/types.js';
import { nodeCycleStatusQuery, specChangedUpdate } from '../../../workflows/messages.js';
import { everyNode, type KnownNodes } from '../../cycle-nodes.js';
import { NodeGroupAttr, ObjectAttr, PhaseAttr } from '../../../workflows/search-attributes.js';
import { cycleObjectAttr, nodeCycleWorkflowId } from '../../../workflows/ids.js';
import { isCycleStatus } from './status.js';
import { describeWorkflow, followHistory, sendUpdate, startOnce, waitWorkflowClosed, workflowTaskFailure, type Described, type StartResult, type TrackedSource, type UpdateNotApplied } from '../temporal.js';

/** What the bridge needs from Temporal (an interface so the reconciler reads as a list of steps). */
export interface CycleWorkflows extends TrackedSource<CycleStatus> {
  start(workflowId: string, ref: Required<Pick<CycleRequestRef, 'namespace' | 'name' | 'uid'>> & { generation?: number }, spec: CycleNodeRequestSpec): Promise<StartResult>;
  /** undefined when no workflow has this ID. */
  describe(workflowId: string): Promise<Described | undefined>;
  /** Requests cancellation; the workflow runs its compensations, then closes. */
  cancel(workflowId: string): Promise<void>;
  /** Sends an edited spec: applied (the concurrency now in effect) or refused (why, in the workflow's words). */
  changeSpec(workflowId: string, spec: CycleNodeRequestSpec, generation: number | undefined): Promise<{ applied: true; concurrency: number } | UpdateNotApplied>;
}

/**
 * Every node of a running request as the bridge knows it: the cycleStatus answer lists only a
 * bounded set (#28), so the bridge pages the nodes changed since its last look (cycleNodes) and
 * keeps them, one entry per node, until the workflow closes. A restarted bridge pages them all once.
 */
async function everyKnownNode(client: Client, h: ReturnType<Client['workflow']['getHandle']>, known: Map<string, KnownNodes>): Promise<CycleStatus> {
  const r = await everyNode(h, known.get(h.workflowId), undefined, (node) => nodeCycleStatus(client, h.workflowId, node));
  if (r.known) known.set(h.workflowId, r.known);
  return r.status;
}

/** A node cycle's own status: its result once it completed, its query while it runs; undefined when it cannot say (never started, failed without a report). */
async function nodeCycleStatus(client: Client, requestId: string, node: string): Promise<CycleNodeStatus | undefined> {
  const h = client.workflow.getHandle(nodeCycleWorkflowId(requestId, node));
  try {
    const d = await h.describe();
    if (d.status.name === 'COMPLETED') return (await h.result()) as CycleNodeStatus;
    if (d.status.name === 'RUNNING') return await h.query(nodeCycleStatusQuery);
    return undefined;
  } catch {
    return undefined;
  }
}

export function cycleWorkflows(client: Client, taskQueue: string): CycleWorkflows {
  const describe = (workflowId: string) => describeWorkflow(client, workflowId);
  const known = new Map<string, KnownNodes>();
  return {
    async start(workflowId, ref, spec) {
      const groups = nodeGroupsOf(spec);
      const input: CycleRequestInput = { request: { namespace: ref.namespace, name: ref.name, uid: ref.uid, generation: ref.generation }, spec };
      return startOnce(client, CYCLE_WORKFLOW_TYPE, {
        args: [input],
        workflowId,
        taskQueue,
        typedSearchAttributes: [
          { key: ObjectAttr, value: cycleObjectAttr(ref) },
          { key: NodeGroupAttr, value: groups[0] ?? '' },
          { key: PhaseAttr, value: 'Pending' },
        ],
        staticSummary: `Cycle nodes of ${groups.join(', ')} for CycleNodeRequest ${ref.namespace}/${ref.name} (method ${spec.cycleSettings.method})`,
      });
    },

    async query(workflowId, timeoutMs) {
      return client.withDeadline(Date.now() + timeoutMs, () => everyKnownNode(client, client.workflow.getHandle(workflowId), known));
    },

    describe,

    follow: (workflowId, signal) => followHistory(client, workflowId, signal),

    waitClosed: async (workflowId, signal) => {
      try {
        return await waitWorkflowClosed(client, workflowId, signal, (h) => everyKnownNode(client, h, known), isCycleStatus);
      } finally {
        if (!signal.aborted) known.delete(workflowId);
      }
    },

    async cancel(workflowId) {
      await client.workflow.getHandle(workflowId).cancel();
    },

    taskFailure: (workflowId) => workflowTaskFailure(client, workflowId),

    async changeSpec(workflowId, spec, generation) {
      const r = await sendUpdate(client, workflowId, specChangedUpdate, [{ spec, generation }]);
      return r.applied ? { applied: true, concurrency: r.result.concurrency } : r;
    },
  };
}
