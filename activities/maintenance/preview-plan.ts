// The Idle preview of one node, assembled from what the drain's classification says about its pods
// (targets mode, the whole effective plan as lanes) and today's PodDisruptionBudgets. Pure: the
// previewMaintenance activity (preview.ts) does the reads. A Default pod's entry is the first plan
// entry it matches; DaemonSet and static pods are Kept (NM-6.7); DrainRule orders are the waves.
import { entryMatches, type PlanEntry } from '../../api/drain-plan.js';
import { matchesSelector, type LabelSelector } from '../../api/label-selector.js';
import type { PodVerdict } from '../../shared/drain.js';
import type { NodePreview, PreviewPod } from '../../shared/maintenance-preview.js';
import type { PodFacts } from '../drain/classify.js';

/** Pods listed per node (counts stay exact): the preview lives in workflow history. */
export const PREVIEW_POD_CAP = 50;
/** Pods listed over all nodes (about 150 bytes each): many nodes list fewer pods each, never fewer than 5. */
export const PREVIEW_TOTAL_POD_CAP = 2000;

/** How many pods each of `nodes` previewed nodes lists. */
export const podCapFor = (nodes: number) => Math.max(5, Math.min(PREVIEW_POD_CAP, Math.floor(PREVIEW_TOTAL_POD_CAP / Math.max(1, nodes))));
/** Blocked pods named in the one-line message. */
const MESSAGE_BLOCKED_CAP = 3;

/** A policy/v1 PodDisruptionBudget as the preview needs it. */
export interface PdbFacts {
  namespace: string;
  name: string;
  /** null: selects no pod (policy/v1); {} selects every pod of the namespace. */
  selector: LabelSelector | null;
  disruptionsAllowed: number;
}

export interface NodePreviewInput {
  node: string;
  exists: boolean;
  plan: readonly PlanEntry[];
  /** The drain's verdicts, classified with the whole plan as targets. */
  verdicts: readonly PodVerdict[];
  /** The facts they were made from (priority, labels), matched by uid. */
  pods: readonly PodFacts[];
  pdbs: readonly PdbFacts[];
  /** Invalid drain options and invalid DrainRules that would hold the node. */
  errors: readonly string[];
  /** Pods listed at most (default PREVIEW_POD_CAP). */
  podCap?: number;
}

/** PDBs that select the pod and allow no disruption now. */
export function blockingPdbs(pdbs: readonly PdbFacts[], pod: Pick<PodFacts, 'namespace' | 'labels'>): string[] {
  return pdbs
    .filter((b) => b.namespace === pod.namespace && b.selector !== null && b.disruptionsAllowed <= 0 && matchesSelector(b.selector, pod.labels))
    .map((b) => b.name)
    .sort();
}

export function entryOf(plan: readonly PlanEntry[], v: Pick<PodVerdict, 'podType'>, p: Pick<PodFacts, 'priority' | 'labels'>): number {
  return plan.findIndex((e) => entryMatches(e, { podType: v.podType, priority: p.priority, labels: p.labels }));
}

const evicts = (p: PreviewPod) => p.action === 'Evict' || p.action === 'Delete';
const notable = (p: PreviewPod) => !!p.blockedBy || p.action === 'Skip' || p.action === 'WaitCompleted';
const byPlace = (a: PreviewPod, b: PreviewPod) => (a.entry < 0 ? 1e9 : a.entry) - (b.entry < 0 ? 1e9 : b.entry) || a.wave - b.wave || (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0);

export function nodePreview(input: NodePreviewInput): NodePreview {
  const facts = new Map(input.pods.map((p) => [p.uid, p]));
  const all: PreviewPod[] = [];
  for (const v of input.verdicts) {
    const f = facts.get(v.uid);
    if (!f || v.terminating) continue; // already leaving: nothing for the plan to do
    const entry = entryOf(input.plan, v, f);
    const untargeted = v.targeted === false;
    const action = untargeted ? 'Skip' : v.action;
    const p: PreviewPod = { pod: `${v.namespace}/${v.name}`, entry, wave: action === 'Skip' ? 0 : v.order, action, reason: untargeted ? 'matches no plan entry' : v.reason };
    if (v.kept) p.kept = true;
    if (action === 'Evict') {
      const pdbs = blockingPdbs(input.pdbs, f);
      if (pdbs.length) p.blockedBy = pdbs;
    }
    all.push(p);
  }
  all.sort(byPlace);
  const evicted = all.filter(evicts);
  const blocked = all.filter((p) => p.blockedBy);
  const counts = {
    evict: evicted.length,
    entries: new Set(evicted.map((p) => p.entry)).size,
    waitCompleted: all.filter((p) => p.action === 'WaitCompleted').length,
    skipped: all.filter((p) => p.action === 'Skip' && !p.kept).length,
    kept: all.filter((p) => p.kept).length,
    blocked: blocked.length,
  };
  // Capped: blocked, skipped, kept and waited-for pods first (what an operator must read), then the rest in plan order.
  const listed = new Set([...all.filter(notable), ...all.filter((p) => !notable(p))].slice(0, input.podCap ?? PREVIEW_POD_CAP));
  const pods = all.filter((p) => listed.has(p));
  const errors = [...input.errors];
  return {
    node: input.node,
    exists: input.exists,
    message: previewMessage(input.exists, counts, blocked, errors),
    ...counts,
    pods,
    podsOmitted: all.length - pods.length,
    errors,
  };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "Planned: 12 pods in 3 entries, 2 skipped, 1 kept; blocked now: app/db-0 (PDB db)". */
export function previewMessage(exists: boolean, c: Pick<NodePreview, 'evict' | 'entries' | 'waitCompleted' | 'skipped' | 'kept'>, blocked: readonly PreviewPod[], errors: readonly string[]): string {
  if (!exists) return 'Planned: node no longer exists';
  let m = c.evict ? `Planned: ${plural(c.evict, 'pod')} in ${plural(c.entries, 'entry', 'entries')}` : 'Planned: no pod to evict';
  if (c.waitCompleted) m += `, ${c.waitCompleted} waited for`;
  m += `, ${c.skipped} skipped, ${c.kept} kept`;
  if (blocked.length) {
    const named = blocked.slice(0, MESSAGE_BLOCKED_CAP).map((p) => `${p.pod} (PDB ${p.blockedBy!.join(', ')})`);
    if (blocked.length > MESSAGE_BLOCKED_CAP) named.push(`${blocked.length - MESSAGE_BLOCKED_CAP} more`);
    m += `; blocked now: ${named.join(', ')}`;
  }
  if (errors.length) m += `; held: ${errors[0]}${errors.length > 1 ? ` (+${errors.length - 1})` : ''}`;
  return m;
}
