// The cycle workflows' contract with the CRD bridge and the CLI: input, status (the query result the
// bridge mirrors into CycleNodeRequest / CycleNodeStatus), and the object → workflow ID rule.
import type { CycleNodePhase, CycleNodeRequestSpecInput, CycleNodeStatusStatus, CycleRequestPhase, NodesByPhase } from '../../api/cycle-node-request.js';

export const CYCLE_WORKFLOW_TYPE = 'cycleNodeRequestWorkflow';
export const NODE_CYCLE_WORKFLOW_TYPE = 'cycleNodeWorkflow';

export interface CycleRequestRef {
  namespace: string;
  name: string;
  uid: string;
  generation?: number;
}

export interface CycleRequestInput {
  request: CycleRequestRef;
  spec: CycleNodeRequestSpecInput;
}

/**
 * A node's cycle, as its cycleNodeWorkflow reports it and the request keeps it: exactly the status
 * of the node's CycleNodeStatus object (one name, one shape), plus the node's name and the report's
 * order. The request's `status.nodes[]` shows a summary of it (CycleNodeSummary).
 */
export interface CycleNodeStatus extends Omit<CycleNodeStatusStatus, 'phase'> {
  nodeName: string;
  phase: CycleNodePhase;
  /** Orders a node's progress reports: the parent keeps only the newest. */
  seq?: number;
  /** The request's change number when this node last changed (cycleNodes pages by it). */
  change?: number;
}

/** A page of the request's nodes, by change (the cycleNodes query). */
export interface CycleNodesPage {
  nodes: CycleNodeStatus[];
  /** The request's change number now: the pages are complete once one has asked up to it. */
  changes: number;
  /**
   * Set when changes after the asked number and up to this one have left the request's journal
   * (#28: it keeps the last 1,000 ended nodes): those nodes' statuses are their node cycles' own.
   */
  lostUpTo?: number;
}

export interface CycleStatus {
  phase: CycleRequestPhase;
  message: string;
  /**
   * A bounded list of the request's nodes with their own phases (workflows/cycle/view.ts: in
   * flight, the first failed, the last cycled, pending ones while short); every node is counted in
   * `nodesByPhase`, and its status paged by cycleNodes and kept in its CycleNodeStatus (#28).
   */
  nodes: CycleNodeStatus[];
  /** How many node changes the request has seen (each node's `change` is one of them). */
  changes?: number;
  nodesCycled: number;
  nodesTotal: number;
  /** Nodes per phase (all of them, also those `nodes` leaves out). */
  nodesByPhase?: NodesByPhase;
  /** Nodes in flight at once, as now in effect (spec edits change it for the next batch). */
  concurrency?: number;
  startedAt?: string;
  completedAt?: string;
}

/**
 * One workflow per object. The uid makes a deleted-and-recreated object a new cycle; the same
 * object (any number of watch events, bridge restarts) always maps to the same ID (workflows/ids.ts).
 */
export { cycleWorkflowId, nodeCycleWorkflowId } from '../ids.js';
