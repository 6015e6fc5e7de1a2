// A started node's way through the rollout (RM-2.1): one handler per phase, each a pure function of
// the node's record and what its coordinator last reported, answering the next phase and the effect
// the engine (engine.ts) carries out. The table of contents is PHASE_HANDLERS.
import type { RolloutNodePhase } from '../../../api/rollout.js';
import type { NodeReport } from '../types.js';
import { cordonedAt, type RolloutNode } from './record.js';

export interface NodeView {
  rec: RolloutNode;
  /** The coordinator's latest report for this maintenance (undefined before the first). */
  report?: NodeReport;
  planLength: number;
  /** Our release of the node has been acknowledged (or none was needed). */
  released: boolean;
  /** The health checks are running (Verifying). */
  checking: boolean;
  nowMs: number;
  /** spec.rollout.nodeTimeout in ms, if set. */
  timeoutMs?: number;
  /** spec.rollout.nodeTimeout as written (for the message). */
  timeout?: string;
}

/**
 * What to do: a new phase (with its message), and an effect: record the bootID before AwaitingWork,
 * release the node, run the health checks, or (start) register it with its coordinator.
 */
export interface Step {
  to?: RolloutNodePhase;
  message?: string;
  effect?: 'recordBoot' | 'release' | 'verify';
}

type Handler = (v: NodeView) => Step | undefined;

/** The table of contents: one handler per phase. */
export const PHASE_HANDLERS: Record<RolloutNodePhase, Handler> = {
  Waiting: waiting, // started by the planner (plan.ts); cordoned once its budget slot is granted
  Cordoned: cordoned, // its drain gets targets
  Draining: draining, // drained at the end of its plan → bootID recorded → AwaitingWork
  AwaitingWork: awaitingWork, // reboot, annotation or the operator's word → released → Verifying
  Verifying: verifying, // release acknowledged → health checks → Done
  Done: () => undefined,
  Failed: () => undefined,
};

/** The node's next step, if any. */
export const nextStep = (v: NodeView): Step | undefined => PHASE_HANDLERS[v.rec.phase](v);

const deleted: Step = { to: 'Done', message: 'node deleted' };

/** nodeTimeout passed since the node was cordoned (RM-4.1). */
export function deadlineMs(rec: RolloutNode, timeoutMs: number | undefined): number | undefined {
  const at = cordonedAt(rec);
  return timeoutMs === undefined || at === undefined ? undefined : Date.parse(at) + timeoutMs;
}

function timedOut(v: NodeView): Step | undefined {
  const d = deadlineMs(v.rec, v.timeoutMs);
  return d !== undefined && v.nowMs >= d ? { to: 'Failed', message: `no completion within ${v.timeout}` } : undefined;
}

/** What every started node checks first: deleted, or its drain failed. */
function broken(v: NodeView): Step | undefined {
  if (v.report?.gone) return deleted;
  if (v.report?.drainFailed) return { to: 'Failed', message: `drain failed: ${v.report.drainFailed}` };
  return undefined;
}

function waiting(v: NodeView): Step | undefined {
  const r = v.report;
  if (!v.rec.held || !r) return undefined;
  if (r.gone) return deleted;
  // Cordoned by its coordinator: the budget granted it a slot, and no cycle claims it (RM-1.5, RM-1.6).
  return r.budgetWait === undefined && !r.claimedBy ? { to: 'Cordoned' } : undefined;
}

function cordoned(v: NodeView): Step | undefined {
  const b = broken(v) ?? timedOut(v);
  if (b) return b;
  const r = v.report;
  return r && !r.claimedBy && (r.lanes.length > 0 || r.drained) ? { to: 'Draining' } : undefined;
}

function draining(v: NodeView): Step | undefined {
  const b = broken(v) ?? timedOut(v);
  if (b) return b;
  const r = v.report;
  const atEnd = (v.rec.index ?? 0) >= v.planLength;
  return atEnd && r?.drained && !r.claimedBy ? { to: 'AwaitingWork', effect: 'recordBoot' } : undefined;
}

function awaitingWork(v: NodeView): Step | undefined {
  if (v.rec.workDone === 'gone' || v.report?.gone) return deleted;
  if (v.rec.workDone === 'replaced') return { to: 'Done', message: 'node replaced (a new Node under its name)' };
  if (v.rec.workDone) return { to: 'Verifying', effect: 'release', message: `work done (${v.rec.workDone})` };
  return timedOut(v);
}

function verifying(v: NodeView): Step | undefined {
  if (!v.released || v.checking) return undefined;
  return { effect: 'verify' };
}
