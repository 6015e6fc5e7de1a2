// Named kill points (as etcd's gofail): `failpoint('worker.drain.after-cordon')` makes the process
// `kill -9` itself there when the chaos runner armed that name. Node-only (never imported by
// workflow code: a kill inside a workflow task would only test the SDK). Unarmed, a call is one
// property read. A drain's activities serve three callers (a cycle's drain, a NodeMaintenance's, the
// CLI's): `drainCaller()` (workflows/ids.ts) tells them apart by the calling workflow's ID, so each has its own points. Armed by:
//   SLIPWAY_FAILPOINTS=a,b          fires every time the process passes one of these points
//   SLIPWAY_FAILPOINTS_FILE=<path>  the file lists names (comma or newline); fires once per file:
//                                   the first hit writes <path>.hit (exclusive create) with the name,
//                                   so the restarted process passes the same point unharmed.
//                                   `name@N` fires at this process's Nth pass of the point (a rollout
//                                   passes a coordinator's cordon once per node: @2 is the second node).
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/** Every point, with where it is: `npm run -s chaos -- --list` prints this. */
export const FAILPOINTS = {
  'worker.cycle.after-resolve': 'the request resolved to its nodes (re-attach of a previous run done), before it claims them',
  'worker.cycle.after-claim': 'the batch claimed (annotations written), before the detach',
  'worker.cycle.mid-detach': 'one node of the batch marked and detached, the others not yet',
  'worker.cycle.after-detach': 'the batch detached, before the replacements are Ready',
  'worker.cycle.waiting-replacements': 'inside the wait for replacements, one look taken and not yet enough Ready',
  'worker.cycle.after-replacements-ready': 'replacements Ready and healthy, before the wait returns',
  'worker.cycle.after-protect': 'replacements marked scale-down-disabled, before the drain',
  'worker.drain.after-classify': 'the drain snapshot taken, before any eviction',
  'worker.drain.after-cordon': 'the node cordoned, before the snapshot and evictions',
  'worker.drain.mid-wave': 'mid-wave: half of the wave\'s evictions sent, the rest not',
  'worker.drain.after-wave-sent': 'every eviction of the wave sent, before the activity returns',
  'worker.drain.wave-wait': 'inside the wave wait, pods still leaving the node',
  'worker.drain.between-waves': 'a wave has left the node, before the next wave is evicted',
  'worker.drain.volume-wait': 'inside the volume-detach wait, before it looks',
  'worker.drain.after-volume-wait': 'volumes detached, before the wait returns',
  'worker.cycle.after-node-delete': 'the Node deleted, before the instance is terminated',
  'worker.cycle.after-terminate': 'the instance terminated, before the workflow records it',
  'worker.cycle.after-release-scale-down': 'scale-down protection released, before the batch ends',
  'worker.cycle.mid-heal': 'healing: one node re-attached, not yet uncordoned',
  'worker.cycle.after-heal': 'healing done for the batch, before the activity returns',
  'worker.budget.after-acquire-write': 'a NodeDisruptionBudget slot recorded in the budget\'s status, before the activity returns',
  'worker.budget.after-release-write': 'a NodeDisruptionBudget slot removed from the budget\'s status, before the activity returns',
  'bridge.cnr.after-finalizer': 'the finalizer added, before the workflow start',
  'bridge.cnr.after-start': 'the workflow started, before the first status write',
  'bridge.cnr.after-status': 'a status written, before the CycleNodeStatus writes',
  'bridge.cnr.after-node-status': 'a CycleNodeStatus created, before its patch',
  'bridge.cnr.after-cancel': 'the request deleted: the workflow cancelled, before the status write',
  'bridge.cnr.before-finalizer-removal': 'the request deleted, its workflow closed: before the finalizer goes',
  'worker.maintenance.after-finalizer': 'a NodeMaintenance left Idle: its finalizer added, before any node is held',
  'worker.maintenance.after-cordon': 'a maintenance\'s node coordinator cordoned its node (hold written), before the node conditions and its report',
  'worker.maintenance.mid-drain': 'a maintenance\'s drain (nm-node/<node>/drain) mid-wave: half of the wave\'s evictions sent',
  'worker.maintenance.after-uncordon': 'Complete: the last hold released and the node uncordoned, before the node conditions and the acknowledgement',
  'worker.cli-drain.after-cordon': 'a CLI drain (drain/<node>) cordoned its node, before the snapshot and evictions',
  'worker.cli-drain.mid-wave': 'a CLI drain mid-wave: half of the wave\'s evictions sent',
  'worker.rollout.after-boot-read': 'a rolling maintenance read a drained node\'s bootID (before the workflow records it and calls the node AwaitingWork)',
  'worker.rollout.awaiting-work': 'a rolling maintenance\'s completion watch of an AwaitingWork node started (the work not seen done yet)',
  'bridge.nm.after-start': 'the maintenance workflow started, before the tracker and the first status write',
  'bridge.nm.after-stage-complete': 'a maintenance deleted: spec.stage patched to Complete, before the workflow is told (specChanged, deleting)',
  'bridge.nm.before-finalizer-removal': 'a maintenance deleted, its workflow completed (nodes released): before the finalizer goes',
} as const;

export type FailpointName = keyof typeof FAILPOINTS;

const env = process.env;

/** The names armed in the file (read on every pass: the runner arms while the process runs). */
function armedInFile(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/[\s,]+/).filter(Boolean);
  } catch {
    return [];
  }
}

/** Passes of each point in this process (for `name@N`). */
const passes = new Map<string, number>();

/** Whether the file arms this pass of `name`: `name` (any pass) or `name@N` (the Nth). */
function armedNow(armed: string[], name: string, pass: number): boolean {
  return armed.some((a) => a === name || a === `${name}@${pass}`);
}

/** True when this pass must kill (and, for the file, claims the one hit). */
export function shouldFire(name: FailpointName, e: Record<string, string | undefined> = env): boolean {
  if (!e.SLIPWAY_FAILPOINTS && !e.SLIPWAY_FAILPOINTS_FILE) return false;
  if (e.SLIPWAY_FAILPOINTS?.split(',').map((s) => s.trim()).includes(name)) return true;
  const file = e.SLIPWAY_FAILPOINTS_FILE;
  if (!file) return false;
  const pass = (passes.get(name) ?? 0) + 1;
  passes.set(name, pass);
  if (!armedNow(armedInFile(file), name, pass)) return false;
  try {
    const fd = openSync(`${file}.hit`, 'wx'); // exclusive: one hit per file, even across processes
    writeSync(fd, `${name}\n`);
    closeSync(fd);
    return true;
  } catch {
    return false; // hit already
  }
}

/** Kills the process with SIGKILL (no cleanup, no flush: a crash) when `name` is armed. */
export function failpoint(name: FailpointName): void {
  if (!env.SLIPWAY_FAILPOINTS && !env.SLIPWAY_FAILPOINTS_FILE) return;
  if (!shouldFire(name)) return;
  try {
    writeSync(2, `slipway failpoint ${name}: kill -9 ${process.pid}\n`);
  } catch {
    // stderr closed: die anyway
  }
  process.kill(process.pid, 'SIGKILL');
}

