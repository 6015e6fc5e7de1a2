// Every signal, query and update of Slipway's workflows. The workflows, the bridge and the CLI all
// import this one module, so their names cannot drift apart.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CycleNodeRequestSpecInput } from '../api/cycle-node-request.js';
import type { CycleNodesPage, CycleStatus, CycleNodeStatus } from './cycle/types.js';
import type { DrainStatus } from './drain/status.js';
import type { Lane } from '../api/drain-plan.js';
import { DRAIN_DECISIONS_QUERY, type OperatorDecision } from '../shared/drain.js';
import type { NodeMaintenanceSpecInput } from '../api/node-maintenance.js';
import type { RolloutNodePhase, RolloutPhase } from '../api/rollout.js';
import type { Holder, NodeTargetsState, ReachedState } from './maintenance/targets.js';
import type { HolderInfo, MaintenancePlan, MaintenanceStatus, NodeCounts, NodeReport, Stage } from './maintenance/types.js';

export interface PodTarget {
  namespace: string;
  name: string;
  /** Recorded in status and in the Event on the pod. */
  reason?: string;
  /** Who asked (the CLI sends user@host): recorded with the forced action and in the Event, beside the client identity Temporal keeps in the history. */
  requestedBy?: string;
}

/** Leave this pod on the node: the drain stops waiting for it and never evicts it. */
export const skipPodSignal = defineSignal<[PodTarget]>('skipPod');
/** Delete this pod now with grace period 0, bypassing its PDB. */
export const forceDeletePodSignal = defineSignal<[PodTarget]>('forceDeletePod');
/** Retry refused evictions now instead of after their backoff. */
export const retryNowSignal = defineSignal('retryNow');

export const drainStatusQuery = defineQuery<DrainStatus>('drainStatus');
/**
 * The operator's decisions the drain has accepted, by pod key (namespace/name): 'Skip' (skipPod, or
 * kept for want of an evacuator) or 'ForceDelete' (a forceDeletePod not yet carried out); the latest
 * signal for a pod wins. The drain's activities ask it right before each eviction or deletion, so a
 * decision accepted while one of them runs stops its next request (activities/drain/decisions.ts).
 */
export const drainDecisionsQuery = defineQuery<Record<string, OperatorDecision>>(DRAIN_DECISIONS_QUERY);

/** The cycle request's progress: phase, message, counts per phase and a bounded list of nodes (mirrored into status by the bridge). */
export const cycleStatusQuery = defineQuery<CycleStatus>('cycleStatus');
/** The request's nodes changed after a change number, a page at a time (the bridge's CycleNodeStatus objects follow it). */
export const cycleNodesQuery = defineQuery<CycleNodesPage, [{ changedAfter: number; limit?: number }]>('cycleNodes');
/** One node's cycle. */
export const nodeCycleStatusQuery = defineQuery<CycleNodeStatus>('nodeCycleStatus');

/** A node cycle tells its request about its phase. */
export const nodeProgressSignal = defineSignal<[CycleNodeStatus]>('nodeProgress');
/** A drain tells the workflow it reports to what blocks it (sent only when the message changes). */
export const drainProgressSignal = defineSignal<[DrainReport]>('drainProgress');

export interface DrainReport {
  nodeName: string;
  message: string;
  evicted: number;
  /** Targets mode only: the targets this report is about, whether the node is finished at them, and the counts. */
  targetsSeq?: number;
  finished?: boolean;
  counts?: NodeCounts;
  /** Targets mode: the drain has ended Drained (final targets, volumes detached or timed out). */
  drained?: boolean;
  /** Targets mode: the lowest priority of a Default pod no lane targets yet; null when there is none. */
  lowestUntargeted?: number | null;
  volumeTimedOut?: boolean;
  /** Pods skipped or deleted instead of evicted (skipPod, forceDeletePod, podEvictionTimeout Delete): the object's owner records them. */
  forced?: import('./drain/status.js').ForcedReport;
  /** Targets mode: the lanes the drain works to (the coordinator's, with the advances it applied itself). */
  lanes?: Lane[];
  /** Targets mode: what the drain reached by advances it applied itself (holderAdvanced), for the coordinator to fold in. */
  reached?: ReachedState;
}

/** Targets mode (NodeMaintenance): only pods matching a lane may leave; `final` once no further lane can come. */
export interface DrainTargets {
  lanes: Lane[];
  final: boolean;
  /** Increases with every change, so reports can be matched to the targets they answer. */
  seq: number;
  /** The maintenances draining the node, as Evacuation requesters (NM-5.1, 5.6); sent again when they change. */
  requesters?: Array<{ name: string; reason?: string }>;
  /**
   * Issue 26 §5: the holders and the coordinator's targets state these lanes come from. With them the
   * drain reports straight to the covering holders and applies a holder's advance itself
   * (holderAdvanced), by the same pure function (targets.ts updateTargets) the coordinator uses.
   */
  holders?: Holder[];
  state?: NodeTargetsState;
}
/** The node coordinator hands its drain new targets (never fewer lanes). */
export const drainTargetsSignal = defineSignal<[DrainTargets]>('drainTargets');

/** A maintenance moved to plan position `index` (A3): sent to each of its nodes' drains beside its register. */
export interface HolderAdvanced {
  id: string;
  index: number;
}
export const holderAdvancedSignal = defineSignal<[HolderAdvanced]>('holderAdvanced');

/**
 * A drain in targets mode tells each covering holder where it stands, straight (the coordinator
 * relays the same a step later): its lanes (the coordinator's targets `seq`, with the advances the
 * drain applied itself), whether it is finished there. `n` orders one drain's reports at one seq.
 */
export interface DrainStanding {
  node: string;
  /** The drain's first run ID (stable across continue-as-new). */
  run: string;
  seq: number;
  n: number;
  lanes: Lane[];
  finished: boolean;
  lowestUntargeted?: number | null;
}
export const drainStandingSignal = defineSignal<[DrainStanding]>('drainStanding');

/**
 * The request's spec was edited (the bridge sends every new generation). Accepted only when nothing
 * but cycleSettings.concurrency changed; answers the concurrency now in effect (for the next batch).
 */
export const specChangedUpdate = defineUpdate<{ concurrency: number }, [{ spec: CycleNodeRequestSpecInput; generation?: number }]>('specChanged');

/** The node-group lock's holder is done with the node group. */
export const releaseLockSignal = defineSignal('releaseLock');
/** The node-group lock asks whether its holder still runs: the signal fails once the holder has closed. */
export const lockHolderProbeSignal = defineSignal('lockHolderProbe');
/** A request waits for a held node-group lock: the lock tells it (lockFreed, to this workflow ID) when it ends. */
export const lockWaiterSignal = defineSignal<[waiter: string]>('lockWaiter');
/** The node-group lock a request waited for has ended: try to take it now. */
export const lockFreedSignal = defineSignal('lockFreed');

// ---- NodeMaintenance (workflows/maintenance): the maintenance workflow and the per-node coordinator.

/** What the maintenance workflow mirrors (the bridge writes it into status). */
export const maintenanceStatusQuery = defineQuery<MaintenanceStatus>('maintenanceStatus');
/** The Idle preview in full: per node, which pods Drain would evict in which entry and wave, skipped, kept, PDB-blocked. */
export const maintenancePlanQuery = defineQuery<MaintenancePlan>('maintenancePlan');
/** The same, computed afresh (while Idle; `maintenance <name> plan`): answers once a preview started after the ask is done. */
export const maintenanceRefreshPlanUpdate = defineUpdate<MaintenancePlan, []>('refreshPlan');
/** The bridge sends every new generation of the spec; accepted: a forward stage and reason. Answers the stage in effect. */
export const maintenanceSpecChangedUpdate = defineUpdate<{ stage: Stage; generation?: number }, [{ spec: NodeMaintenanceSpecInput; generation?: number; allowAllNodes?: boolean }]>('specChanged');
/** Advance the stage by hand (CLI, Web UI): writes spec.stage to the object, then acts. */
export const setStageUpdate = defineUpdate<{ stage: Stage; generation?: number }, [{ stage: string; reason?: string; requestedBy?: string }]>('setStage');
/** The object is being deleted: Complete is in effect (the bridge also patches spec.stage). */
export const maintenanceDeletingSignal = defineSignal('deleting');
/** From the bridge's feed (starter/bridge/preview-feed.ts): something the Idle preview read has changed; recompute it. */
export const previewInputsChangedSignal = defineSignal('previewInputsChanged');

/**
 * Rolling maintenance (spec.rollout): an operator says a node's work is done (any completion method;
 * refused unless the node is in the maintenance and AwaitingWork). Answers the node's new phase.
 */
export const rolloutNodeDoneUpdate = defineUpdate<{ node: string; phase: RolloutNodePhase }, [{ node: string; requestedBy?: string }]>('rolloutNodeDone');
/** Pause (take no new node; nodes in progress go on) or resume a rollout; refused without spec.rollout or once Complete. */
export const setRolloutPausedUpdate = defineUpdate<{ phase: RolloutPhase }, [{ paused: boolean; requestedBy?: string }]>('setRolloutPaused');

/** A maintenance holds the node, or its stage or plan position changed (an upsert, idempotent). */
export const registerHolderSignal = defineSignal<[HolderInfo]>('register');
/** A maintenance lets go of the node (Complete, or the node left its selection). */
export const releaseHolderSignal = defineSignal<[{ id: string }]>('release');
/**
 * From the bridge's Node watch (starter/bridge/maintenance/held-nodes.ts) to a node's coordinator:
 * the node changed in a way its holders care about (uncordoned, held-by gone, a cycle's claim, gone
 * or back), or the watch (re)started; look at the node now (NM-2.5, NM-7.7).
 */
export const nodeChangedSignal = defineSignal('nodeChanged');
/** The node coordinator's report to one holder. */
export const nodeReportSignal = defineSignal<[NodeReport]>('nodeReport');
/** The node coordinator's state: holders, targets, the drain's last report. */
export const nodeMaintenanceStateQuery = defineQuery<{ node: string; holders: HolderInfo[]; lanes: Lane[]; final: boolean; seq: number; drain?: DrainReport }>('nodeMaintenanceState');

/** The drift observer: look now instead of at the end of its interval (the bridge sends it when the NodeGroup changes). */
export const observeNowSignal = defineSignal('observeNow');
