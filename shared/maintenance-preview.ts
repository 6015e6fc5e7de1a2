// The Idle preview of a NodeMaintenance (previewMaintenance activity, maintenancePlan query): what
// Drain would do, computed without touching anything. Plain data crossing the activity boundary, so
// it lives below both activities/ and workflows/.

/** One pod in a node's preview. */
export interface PreviewPod {
  /** namespace/name. */
  pod: string;
  /** Index in the effective plan of the first entry that takes it (-1: none). */
  entry: number;
  /** DrainRule order inside the entry (the wave); 0 by default. */
  wave: number;
  /** Evict, Delete (finished), WaitCompleted, Skip (skipped or kept). */
  action: 'Evict' | 'Delete' | 'WaitCompleted' | 'Skip';
  /** A targeted DaemonSet or static pod: never evicted, left for node shutdown. */
  kept?: boolean;
  /** Why this action (label, DrainRule, kept reason, "default"). */
  reason: string;
  /** PDBs that select it and allow no disruption now (status.disruptionsAllowed 0). */
  blockedBy?: string[];
}

/** What Drain would do on one node with today's pods, rules and disruption budgets. Counts are exact; `pods` is capped. */
export interface NodePreview {
  node: string;
  exists: boolean;
  /** One line for nodeStatuses[].drainMessage while Idle ("Planned: 12 pods in 3 entries, …"). */
  message: string;
  /** Pods it would evict (or delete, when finished). */
  evict: number;
  /** Plan entries those pods fall in. */
  entries: number;
  waitCompleted: number;
  skipped: number;
  kept: number;
  /** Pods it would evict that a PDB blocks now. */
  blocked: number;
  pods: PreviewPod[];
  podsOmitted: number;
  /** Invalid drain options, invalid DrainRules that would hold this node. */
  errors: string[];
}

export interface MaintenancePreview {
  /** Digest of `nodes`: the workflow keeps (and the history carries) a preview only when it changed. */
  digest: string;
  /** When the activity computed it (or found it unchanged): a preview is as old as this. */
  computedAt: string;
  nodes: NodePreview[];
}

/** Where a preview's reads began: the resourceVersion of each collection it read (one-item lists). */
export interface PreviewReadFrom {
  pods: string;
  pdbs: string;
  drainRules: string;
  nodes: string;
}

/**
 * What a preview was computed from, for the bridge's feed of changes (starter/bridge/maintenance/preview-feed.ts):
 * small, it travels in the workflow's history and in its status query while Idle.
 */
export interface PreviewInputs {
  from: PreviewReadFrom;
  /** The selected nodes (every one: a node leaving or entering the selection is a change). */
  nodes: string[];
  /** Namespaces of the previewed pods: only their PDBs matter. */
  namespaces: string[];
  /** `namespace/name` of the PDBs of those namespaces that allowed no disruption: a flip of that is a change. */
  blockingPdbs: string[];
}
