// The drain's progress, as people read it: a status object (the query result, mirrored into
// custom resources later) and two renderings of it, Cluster API's condition message shape and
// short markdown for the Temporal Web UI. Lists are sorted, grouped by identical reason and
// truncated, so messages do not churn.
import type { WavePlan } from './waves.js';
import { podKey, truncate } from '../../shared/drain.js';
import { entryString } from '../../api/drain-plan.js';
import { ownersText, PRE_DRAIN_HOOK_PREFIX } from '../../api/lifecycle-hooks.js';
import type { DrainTargets } from '../messages.js';
import type { NodeCounts } from '../maintenance/types.js';

export type DrainPhase = 'Pending' | 'Cordoning' | 'Draining' | 'WaitingForVolumeDetach' | 'Drained' | 'Failed';

export interface BlockedGroup {
  reason: string;
  /** PDB names found in the reason, if a disruption budget refused. */
  pdbs: string[];
  pods: string[];
}

export interface ForcedAction {
  pod: string;
  action: 'Skip' | 'ForceDelete' | 'DeleteAfterTimeout';
  by: 'signal' | 'policy';
  /** A signal's sender, as it named itself (PodTarget.requestedBy). */
  requestedBy?: string;
  at: string;
  reason: string;
}

/** The Warning Event on the pod a forced action leaves (activities/metrics.ts counts them by these reasons). */
export const FORCED_POD_EVENT_REASON: Record<ForcedAction['action'], string> = { Skip: 'DrainSkippedPod', ForceDelete: 'DrainForceDeletedPod', DeleteAfterTimeout: 'DrainDeletedPodAfterTimeout' };

/** The Warning Event on the object whose drain it was (a NodeMaintenance, a CycleNodeRequest): issue 24.9. */
export const FORCED_OBJECT_EVENT_REASON: Record<ForcedAction['action'], string> = { Skip: 'PodSkipped', ForceDelete: 'PodForceDeleted', DeleteAfterTimeout: 'PodDeletedAfterTimeout' };

/** One line per forced action, for the object's status and Event: what happened to which pod, on whose word, why. */
export function forcedLine(node: string, f: ForcedAction): string {
  const what = { Skip: 'skipped', ForceDelete: 'force-deleted (grace period 0)', DeleteAfterTimeout: 'deleted after podEvictionTimeout' }[f.action];
  const who = f.by === 'signal' ? `by ${f.action === 'Skip' ? 'skipPod' : 'forceDeletePod'} from ${f.requestedBy ?? 'an unnamed sender'}` : 'by the podEvictionTimeout policy Delete';
  return `Pod ${f.pod} on node ${node} ${what} ${who}: ${f.reason}`;
}

/** What a drain tells the workflow it reports to about its forced actions: how many so far, and the latest few. */
export interface ForcedReport {
  total: number;
  recent: ForcedAction[];
}

/** The actions of a report not seen yet (`seen` counted so far), oldest first. */
export function freshForced(r: ForcedReport | undefined, seen: number): ForcedAction[] {
  if (!r || r.total <= seen) return [];
  return r.recent.slice(-(r.total - seen));
}

export interface DrainStatus {
  node: string;
  phase: DrainPhase;
  startedAt?: string;
  /** Orders of the waves that have left the node. */
  completedWaves: number[];
  wave?: {
    order: number;
    evicting: string[];
    blocked: BlockedGroup[];
    waitingCompletion: string[];
    /** Pods an evacuator is moving (NM-5.4): the evacuator's name and message; never evicted meanwhile. */
    evacuating?: Array<{ pod: string; message: string }>;
  };
  later: Array<{ order: number; pods: string[] }>;
  skipped: Array<{ pod: string; reason: string }>;
  /** Pods that kept coming back after eviction, left on the node (see returns.ts). */
  returning: Array<{ pod: string; reason: string }>;
  /** Invalid DrainRules that hold the drain (nothing is evicted until they are fixed or deleted). */
  heldBy: string[];
  /** Owners of the pre-drain lifecycle hooks the drain waits for (nothing cordoned or evicted meanwhile); absent when none. */
  hooks?: string[];
  forced: ForcedAction[];
  warnings: Array<{ pod: string; warning: string }>;
  volumes?: { message: string; timedOut: boolean };
  /** The Node was missing when the drain started, or was deleted while it ran. */
  nodeGone?: 'before' | 'during';
  evicted: number;
  message: string;
  /** Targets mode (NodeMaintenance): the targets in effect, the last one received by signal or input. */
  targets?: DrainTargets;
  /** Targets mode: nothing targeted is left at these targets (Skip, Kept and untargeted pods aside). */
  finished?: boolean;
  /** Targets mode: the hand-over between plan entries (handover.ts). */
  handover?: import('./handover.js').HandoverState;
  /** Targets mode: the NM-1.7 counts, as last reported. */
  counts?: NodeCounts;
  /** Targets mode: the lowest priority of a Default pod no lane targets yet (null: none; see counts.ts). */
  lowestUntargeted?: number | null;
  /** How often the drain cordoned the node again after someone uncordoned it. */
  recordoned?: number;
  /** A CLI drain not cordoned yet: a NodeDisruptionBudget's refusal (issue 15). */
  budgetWait?: string;
  /** Targets mode: the CycleNodeRequest ("ns/name") that claimed the node (NM-7.7); nothing is cordoned or evicted until it lets go. */
  claimedBy?: string;
}

export function emptyStatus(node: string): DrainStatus {
  return { node, phase: 'Pending', completedWaves: [], later: [], skipped: [], returning: [], heldBy: [], forced: [], warnings: [], evicted: 0, message: '' };
}

const pods = (n: number) => (n === 1 ? 'Pod' : 'Pods');

/** Groups pods by identical blocking reason, sorted by reason. */
export function groupBlocked(blocked: Map<string, string>): BlockedGroup[] {
  const by = new Map<string, string[]>();
  for (const [pod, reason] of blocked) by.set(reason, [...(by.get(reason) ?? []), pod]);
  return [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, ps]) => ({ reason, pdbs: pdbNames(reason), pods: ps.sort() }));
}

export function pdbNames(reason: string): string[] {
  return [...reason.matchAll(/disruption budget (\S+) needs/g)].map((m) => m[1]!);
}

/** The wave part of the status from a plan and the pods currently refused. */
/** `skippedBy`: pods skipped by the workflow itself (skipPod, a DaemonSet pod kept), ns/name → why: their own words, not the classify reason. */
export function waveStatus(plan: WavePlan, blocked: Map<string, string>, skippedBy: ReadonlyMap<string, string> = new Map()): Pick<DrainStatus, 'wave' | 'later' | 'skipped'> {
  const blockedHere = new Map([...blocked].filter(([k]) => plan.toEvict.some((p) => podKey(p) === k)));
  return {
    wave:
      plan.order === undefined
        ? undefined
        : {
            order: plan.order,
            evicting: [...plan.terminating, ...plan.toEvict.filter((p) => !blockedHere.has(podKey(p))), ...plan.toDelete].map(podKey).sort(),
            blocked: groupBlocked(blockedHere),
            waitingCompletion: plan.waitingCompletion.map(podKey),
          },
    later: plan.later.map((l) => ({ order: l.order, pods: l.pods.map(podKey) })),
    skipped: plan.skipped.map((p) => ({ pod: podKey(p), reason: skippedBy.get(podKey(p)) ?? p.reason })),
  };
}

/** "3 Pods skipped (2 by DrainRule keep, 1 DaemonSet-managed)": a drain that skipped everything says so. */
export function skippedSummary(skipped: DrainStatus['skipped']): string {
  if (!skipped.length) return '';
  const parts = byReason(skipped).map((g) => `${g.pods.length} ${skipWhy(g.reason)}`);
  return `${skipped.length} ${pods(skipped.length)} skipped (${truncate(parts, 3)})`;
}

/** A skip reason as words after a count: "by DrainRule keep", "DaemonSet-managed". */
const skipWhy = (r: string) => (r.startsWith('DrainRule ') ? `by ${r}` : r);

/** Pods grouped by identical reason, the largest group first (then by reason): a rule that skips everything leads. */
function byReason(list: ReadonlyArray<{ pod: string; reason: string }>): Array<{ reason: string; pods: string[] }> {
  const by = new Map<string, string[]>();
  for (const x of list) by.set(x.reason, [...(by.get(x.reason) ?? []), x.pod]);
  return [...by.entries()]
    .sort(([a, m], [b, n]) => n.length - m.length || (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, ps]) => ({ reason, pods: [...ps].sort() }));
}

/** "a/x, a/y and 2 more": a few names, the rest counted. */
export const fewNames = (names: string[], max = 2): string => (names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`);

/**
 * Pods deleted instead of evicted, by how: "1 force-deleted, 1 deleted after podEvictionTimeout".
 * A skip is not a deletion: skipped pods are counted with the skipped ones (they stay on the node).
 */
export function deletedSummary(forced: DrainStatus['forced']): string {
  const n = (a: ForcedAction['action']) => forced.filter((f) => f.action === a).length;
  return [n('ForceDelete') && `${n('ForceDelete')} force-deleted`, n('DeleteAfterTimeout') && `${n('DeleteAfterTimeout')} deleted after podEvictionTimeout`].filter(Boolean).join(', ');
}

/** A reason of status.returning without its own "left on the node" ending (the summary says it). */
export const returnReason = (r: string): string => r.replace(/; left on the node$/, '');

/**
 * What stayed on the node, on one line, naming a few pods per reason and counting the rest:
 * "1 Pod skipped (1 by DrainRule keep: app/keep-1); 1 Pod left on the Node: app/sticky-4 (returns after eviction ...)".
 */
export function stayedSummary(s: Pick<DrainStatus, 'skipped' | 'returning'>): string {
  const out: string[] = [];
  if (s.skipped.length) {
    const groups = byReason(s.skipped);
    const parts = groups.slice(0, 3).map((g) => `${g.pods.length} ${skipWhy(g.reason)}: ${fewNames(g.pods)}`);
    const other = groups.slice(3).reduce((k, g) => k + g.pods.length, 0);
    if (other) parts.push(`${other} for other reasons`);
    out.push(`${s.skipped.length} ${pods(s.skipped.length)} skipped (${parts.join('; ')})`);
  }
  const r = s.returning;
  if (r.length) out.push(`${r.length} ${pods(r.length)} left on the Node: ${fewNames(r.map((x) => x.pod), 3)} (${returnReason(r[0]!.reason)}${r.length > 1 ? '; and others alike' : ''})`);
  return out.join('; ');
}

/** The drain's outcome on one line: "6 Pods evicted, 1 force-deleted; 1 Pod skipped (...); 1 Pod left on the Node: ...". */
export function outcomeSummary(s: Pick<DrainStatus, 'evicted' | 'forced' | 'skipped' | 'returning'>): string {
  const deleted = deletedSummary(s.forced);
  const stayed = stayedSummary(s);
  return `${s.evicted} ${pods(s.evicted)} evicted${deleted ? `, ${deleted}` : ''}${stayed ? `; ${stayed}` : ''}`;
}

/** Lines naming the pods a drained node keeps, grouped by reason (at most five groups, the rest counted). */
const stayedLines = (s: DrainStatus): string[] => {
  const groups = [
    ...byReason(s.skipped).map((g) => ({ pods: g.pods, why: `skipped (${g.reason}), left on the node` })),
    ...byReason(s.returning).map((g) => ({ pods: g.pods, why: g.reason })),
  ];
  const lines = groups.slice(0, 5).map((g) => `* ${pods(g.pods.length)} ${truncate(g.pods)}: ${g.why}`);
  const other = groups.slice(5).reduce((k, g) => k + g.pods.length, 0);
  if (other) lines.push(`* ${other} more ${pods(other)} left on the node for other reasons`);
  return lines;
};

const heldLines = (s: DrainStatus) => [
  `Drain held: ${s.heldBy.length === 1 ? 'an invalid DrainRule could decide' : `${s.heldBy.length} invalid DrainRules could decide`} about Pods on Node ${s.node}; nothing is evicted until ${s.heldBy.length === 1 ? 'it is' : 'they are'} fixed or deleted:`,
  ...s.heldBy.slice(0, 3).map((h) => `* ${h}`),
  ...(s.heldBy.length > 3 ? [`* ... (${s.heldBy.length - 3} more)`] : []),
];

const hooksLine = (s: DrainStatus) =>
  `waiting for pre-drain hooks: ${ownersText(s.hooks!)} (Node ${s.node} has annotations ${PRE_DRAIN_HOOK_PREFIX}<owner>; no pod is evicted until their owners remove them)`;

const returningLine = (r: DrainStatus['returning']) =>
  r.length ? [`* ${pods(r.length)} ${truncate(r.map((x) => x.pod))}: ${r[0]!.reason}${r.length > 1 ? ' (and others alike)' : ''}`] : [];

/** Cluster API's drain condition message shape (research/drain.md §A.6). */
export function drainMessage(s: DrainStatus): string {
  if (s.heldBy.length && s.phase !== 'Drained' && s.phase !== 'Failed') return heldLines(s).join('\n');
  if (s.hooks?.length && s.phase === 'Pending') return hooksLine(s);
  if (s.claimedBy && s.phase === 'Draining') return `Cycled by CycleNodeRequest ${s.claimedBy}: nothing is evicted until it lets go of Node ${s.node}`;
  if (s.budgetWait && s.phase === 'Pending') return s.budgetWait;
  if (s.phase === 'Drained' && s.nodeGone === 'before') return `Node ${s.node} not found; nothing to drain`;
  if (s.phase === 'Drained') {
    // The first line counts; the lines after it name what stayed on the node, and why.
    const deleted = deletedSummary(s.forced);
    const done = [`Drain completed: ${s.evicted} ${pods(s.evicted)} evicted${deleted ? `, ${deleted}` : ''}`];
    const skipped = skippedSummary(s.skipped);
    if (skipped) done[0] += `; ${skipped}`;
    if (s.returning.length) done[0] += `; ${s.returning.length} ${pods(s.returning.length)} left on the Node`;
    if (s.nodeGone === 'during') done[0] += ` (Node ${s.node} was deleted during the drain)`;
    return [...done, ...(s.nodeGone ? [] : stayedLines(s))].join('\n');
  }
  if (s.phase === 'WaitingForVolumeDetach') return s.volumes?.message ?? 'Waiting for Node volumes to be detached';
  if (s.targets && s.finished && s.phase === 'Draining') return `Drain targets reached (${targetsText(s.targets)}); waiting for the next targets${returningLine(s.returning).map((l) => `\n${l}`).join('')}`;
  if (!s.wave) return s.phase === 'Failed' ? s.message : `${s.phase}`;
  const lines = [`Drain not completed yet (started at ${s.startedAt ?? '?'}), wave order ${s.wave.order}:`];
  if (s.wave.evicting.length) lines.push(`* ${pods(s.wave.evicting.length)} ${truncate(s.wave.evicting)}: deletionTimestamp set, but still not removed from the Node`);
  const shown = s.wave.blocked.slice(0, 5);
  for (const g of shown) lines.push(`* ${pods(g.pods.length)} ${truncate(g.pods)}: ${g.reason}`);
  const other = s.wave.blocked.slice(5).reduce((n, g) => n + g.pods.length, 0);
  if (other) lines.push(`* ${other} ${pods(other)} with other issues`);
  if (s.wave.waitingCompletion.length) lines.push(`* ${pods(s.wave.waitingCompletion.length)} ${truncate(s.wave.waitingCompletion)}: waiting for completion`);
  for (const e of (s.wave.evacuating ?? []).slice(0, 5)) lines.push(`* Pod ${e.pod}: ${e.message}`);
  if ((s.wave.evacuating?.length ?? 0) > 5) lines.push(`* ${s.wave.evacuating!.length - 5} more Pods evacuating`);
  lines.push(...returningLine(s.returning));
  const later = s.later.flatMap((l) => l.pods);
  if (later.length) lines.push(`After above Pods have been removed from the Node, the following Pods will be evicted: ${truncate(later)}`);
  return lines.join('\n');
}

const targetsText = (t: DrainTargets) => (t.lanes.length ? t.lanes.map(entryString).join(', ') : 'no lanes');

/** Short markdown for the Web UI's current details: phase, wave, blockers with their PDBs. */
export function drainMarkdown(s: DrainStatus): string {
  const out = [`**Drain ${s.node}**: ${s.phase}${s.wave ? `, wave order ${s.wave.order}` : ''}; ${s.evicted} evicted`];
  if (s.targets) {
    out.push(`- targets #${s.targets.seq}${s.targets.final ? ' (final)' : ''}: ${targetsText(s.targets)}${s.finished ? ', **finished**' : ''}`);
    if (s.counts) out.push(`- pods: ${s.counts.podsPendingEvictionRequest} pending, ${s.counts.activeEvictionRequests} leaving (${s.counts.podsBlocked} blocked), ${s.counts.podsKept} kept`);
  }
  if (s.hooks?.length && s.phase === 'Pending') out.push(`- **waiting for pre-drain hooks**: ${s.hooks.map((h) => `\`${h}\``).join(', ')} (annotations \`${PRE_DRAIN_HOOK_PREFIX}<owner>\`)`);
  if (s.budgetWait && s.phase === 'Pending') out.push(`- **${s.budgetWait}** (nothing cordoned yet; asked again every 5 s)`);
  if (s.heldBy.length) out.push(`- **held** by invalid DrainRules (fix or delete them to resume):`, ...s.heldBy.map((h) => `  - ${h}`));
  if (s.completedWaves.length) out.push(`Waves done: ${s.completedWaves.join(', ')}`);
  if (s.wave?.evicting.length) out.push(`- leaving (${s.wave.evicting.length}): ${truncate(s.wave.evicting, 5)}`);
  for (const e of s.wave?.evacuating ?? []) out.push(`- **evacuating** \`${e.pod}\`: ${e.message}`);
  for (const g of s.wave?.blocked ?? []) {
    out.push(`- **blocked** (${g.pods.length})${g.pdbs.length ? ` by PDB ${g.pdbs.map((p) => `\`${p}\``).join(', ')}` : ''}: ${truncate(g.pods, 5)}  \n  _${g.reason}_`);
  }
  if (s.wave?.waitingCompletion.length) out.push(`- waiting to complete: ${truncate(s.wave.waitingCompletion, 5)}`);
  for (const l of s.later) out.push(`- later, order ${l.order} (${l.pods.length}): ${truncate(l.pods, 5)}`);
  for (const r of s.returning) out.push(`- left on the node: ${r.pod}: _${r.reason}_`);
  if (s.skipped.length) out.push(`- ${skippedSummary(s.skipped)}`);
  if (s.forced.length) out.push(`- forced: ${s.forced.map((f) => `${f.action} ${f.pod} (${f.by})`).join('; ')}`);
  if (s.volumes) out.push(`- volumes: ${s.volumes.message}`);
  return out.join('\n');
}
