// NodeMaintenance data shared by its two workflows, the bridge (which mirrors MaintenanceStatus into
// the object's status) and the CLI. Plain data only: it crosses workflow, activity and client lines.
import type { Lane, PlanEntry } from '../../api/drain-plan.js';
import type { MaintenancePreview } from '../../shared/maintenance-preview.js';
import type { NodeMaintenanceSpecInput } from '../../api/node-maintenance.js';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { RolloutNodePhase, RolloutPhase } from '../../api/rollout.js';

/** KEP-4212 stages, in rank order (Idle 0 < Cordon 1 < Drain 2 < Complete 3). */
export const STAGES = ['Idle', 'Cordon', 'Drain', 'Complete'] as const;
export type Stage = (typeof STAGES)[number];
export const stageRank = (s: Stage): number => STAGES.indexOf(s);
export const isStage = (s: unknown): s is Stage => typeof s === 'string' && (STAGES as readonly string[]).includes(s);

export interface Condition {
  type: 'Drained' | 'Ready' | 'SelectsAllNodes' | 'RolloutStopped' | 'CannotFinish';
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Per-node pod counts (NM-1.7). */
export interface NodeCounts {
  podsPendingEvictionRequest: number;
  activeEvictionRequests: number;
  podsBlocked: number;
  podsKept: number;
}

/** A node with nothing counted yet. */
export const NO_COUNTS: NodeCounts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };

/** One node as one maintenance sees it (status.nodeStatuses[]). */
export interface MaintenanceNodeStatus extends NodeCounts {
  nodeRef: { name: string };
  drainTargets: Lane[];
  /** First line by the rules of spec §3; blocker lines follow. */
  drainMessage: string;
  limitedBy: string[];
  /** With spec.rollout (docs/rolling-maintenance.md): the node's rollout phase and its record. */
  phase?: RolloutNodePhase;
  waitingFor?: string;
  phaseTimes?: Array<{ phase: RolloutNodePhase; time: string }>;
  bootID?: string;
  message?: string;
}

/** With spec.rollout: where the rollout stands (status.rollout). */
export interface RolloutStatus {
  phase: RolloutPhase;
  maxUnavailable?: number;
  partitions?: string[];
  partition?: string;
  waiting: number;
  inProgress: number;
  done: number;
  failed: number;
  message?: string;
}

export interface DrainStatusSummary extends NodeCounts {
  reachedDrainTargets: Lane[];
  drainMessage: string;
}

/** A stage entered: when, and who asked by setStage (Temporal's caller identity; absent for spec.stage edits, which the audit log attributes). */
export interface StageStatus {
  name: Stage;
  startTimestamp: string;
  requestedBy?: string;
}

/** What the maintenance workflow answers to the `maintenanceStatus` query: exactly what the bridge mirrors. */
export interface MaintenanceStatus {
  stage: Stage;
  stageStatuses: StageStatus[];
  /** The effective plan P(M). */
  drainPlan: PlanEntry[];
  /** Index of the current plan entry i(M) (plan length when past the last). */
  planIndex: number;
  selectedNodes: number;
  nodeStatuses: MaintenanceNodeStatus[];
  nodeStatusesOmitted: number;
  drainStatus: DrainStatusSummary;
  /** With spec.rollout. */
  rollout?: RolloutStatus;
  conditions: Condition[];
  /** One line. */
  message: string;
  /** The last spec generation acted on. */
  observedGeneration?: number;
  /** The reason in effect (spec.reason, or the one setStage wrote there): the StageStarted Event names it. */
  reason?: string;
  /** Set once the workflow has finished Complete (the bridge may drop the finalizer). */
  completed: boolean;
  /** While Idle: what the latest preview read; the bridge signals previewInputsChanged when one of those changes. */
  previewInputs?: import('../../shared/maintenance-preview.js').PreviewInputs;
}

/** How the bridge starts `nodeMaintenanceWorkflow` (ID nm/<name>/<uid>), once per object, even while Idle. */
export interface MaintenanceInput {
  name: string;
  uid: string;
  /** metadata.creationTimestamp: older maintenances win frontier ties. */
  createdAt: string;
  spec: NodeMaintenanceSpecInput;
  generation?: number;
  /** The object carries maintenance.slipway.dev/allow-all-nodes: "true" (NM-4.8). */
  allowAllNodes?: boolean;
  /** The object is already being deleted when the workflow starts. */
  deleting?: boolean;
  /** State carried across continue-as-new (a maintenance may stay in a stage for days). */
  carry?: MaintenanceCarry;
}

export interface MaintenanceCarry {
  stage: Stage;
  desired: Stage;
  index: number;
  reason?: string;
  nodes: Array<[string, NodeReport | undefined]>;
  releasing: string[];
  stageStatuses: StageStatus[];
  /** Who asked for `desired` by setStage, if it was asked that way. */
  desiredBy?: string;
  /** The selection was admitted at this stage's entry (NM-4.8 checks again only at the next stage). */
  admitted: boolean;
  selectsAll?: { total: number; acknowledged: boolean };
  drainedAt?: string;
  /** With spec.rollout: the rollout's record (phases, times, partitions, plan positions, bootIDs). */
  rollout?: import('./rollout/record.js').RolloutRecord;
}

/** A maintenance as a node coordinator sees it (the register signal carries it whole; it is an upsert). */
export interface HolderInfo {
  /** The maintenance's workflow ID (reports go there). */
  id: string;
  name: string;
  createdAt: string;
  stage: 'Cordon' | 'Drain';
  /** The effective plan P(M). */
  plan: PlanEntry[];
  /** i(M); plan.length once past the last entry. */
  index: number;
  reason?: string;
  /** spec.drain: the drain options (when several maintenances cover a node, the oldest's apply). */
  drain?: DrainOptionsInput;
}

/** What a node coordinator tells each holder about the node (signal nodeReport); stale seqs are ignored. */
export interface NodeReport {
  node: string;
  seq: number;
  /** T(N). */
  lanes: Lane[];
  /** No targeted pod left at T(N) (kept and skipped pods aside). */
  finished: boolean;
  /** Final targets, finished, and the volume-detach wait ended. */
  drained: boolean;
  /** The volume wait was cut short by volumeDetachTimeout. */
  volumeTimedOut?: boolean;
  /** The Node does not exist (deleted during the maintenance). */
  gone: boolean;
  /** "ns/name" of the CycleNodeRequest that claimed the node first: not cordoned, not drained, takes no part in advancing (NM-7.7). */
  claimedBy?: string;
  /** This holder's release is done (the node is uncordoned unless someone else holds it). */
  released: boolean;
  counts: NodeCounts;
  /** L(N): the limiting maintenance (name), when one covers the node. */
  limiting?: string;
  /** Names of the Drain-stage holders (the covering maintenances). */
  coveredBy: string[];
  /** limitedBy for this holder on this node (targets.ts limitedBy). */
  limitedBy: string[];
  /** Set for the holder this report goes to when its targets were fast-forwarded here (names of those who set them). */
  fastForwardedBy?: string[];
  /** The drain engine's blocker lines (after its first line), if any. */
  blockers: string;
  /** The lowest priority of a Default pod not yet targeted on the node (null: none; undefined: not known). */
  lowestUntargeted?: number | null;
  /**
   * Issue 26 §5: lanes, finished and lowestUntargeted came straight from the node's drain (its
   * drainStanding report n of drain run `run`, at targets `seq`): the drain's own facts, newer than
   * any relay of them, so the coordinator's reports leave them be.
   */
  direct?: { run: string; n: number; seq: number };
  /** Pods the node's drain skipped or deleted instead of evicting (the latest few, one line each; issue 24.9). */
  forced?: string;
  /** The node's drain failed (podEvictionTimeout policy Fail): why. */
  drainFailed?: string;
  /** Not cordoned yet: a NodeDisruptionBudget has no room for the node (the refusal, as its status shows it). */
  budgetWait?: string;
}

/** The answer of the maintenancePlan query. */
export interface MaintenancePlan {
  name: string;
  stage: Stage;
  /** The effective plan P(M): entry indexes in the preview point here. */
  plan: PlanEntry[];
  /** The latest preview (computed while Idle; kept after Idle as it was last seen). */
  preview?: MaintenancePreview;
}
