// The rollout engine (docs/rolling-maintenance.md): in Drain with spec.rollout, one pass per change
// of the maintenance's loop (stages/hold.ts). Each started node walks the drain plan at its own
// position and then through its phases (phases.ts); the planner (plan.ts) starts the next nodes.
// The waits are the completion watches and one timer on the earliest nodeTimeout (effects.ts), so
// a rollout with nothing changing costs no history.
import { parseDuration } from '../../../api/duration-text.js';
import type { NodeMaintenanceRolloutInput } from '../../../api/rollout.js';
import { advance } from '../progress.js';
import { progressNodes } from '../status.js';
import type { Maintenance } from '../maintenance.js';
import { release, tellAll, tellDrain } from '../stages/members.js';
import { armTimer, readBoot, runChecks, stopNodeEffects, watchWork } from './effects.js';
import { plannerAnswer } from './plan.js';
import { nextStep, type Step } from './phases.js';
import { enter, finished, type RolloutNode, type RolloutRecord } from './record.js';

/** The rollout's record, made on first need (spec.rollout may be added while Idle). */
export function rolloutRecord(m: Maintenance): RolloutRecord {
  m.rollout ??= { nodes: {}, paused: false };
  return m.rollout;
}

/** With spec.rollout this maintenance holds only the nodes its rollout has started and not released. */
export function holds(m: Pick<Maintenance, 'spec' | 'rollout'>, node: string): boolean {
  return !m.spec.rollout || !!m.rollout?.nodes[node]?.held;
}

/** A node's plan position: its own in a rollout (RM-2.3), else the maintenance's i(M). */
export function indexOf(m: Pick<Maintenance, 'spec' | 'rollout' | 'index'>, node: string): number {
  return m.spec.rollout ? (m.rollout?.nodes[node]?.index ?? 0) : m.index;
}


export async function roll(m: Maintenance): Promise<void> {
  const spec = m.spec.rollout!;
  const r = rolloutRecord(m);
  syncRecord(m, r);
  // Each node's steps run side by side, and the next nodes are registered before any of them is
  // awaited: a node released in this pass (Verifying → Done needs no I/O) makes room for the next one
  // in this very workflow task, not after another node's signals (the bench's completion → next cordon).
  const work = Object.entries(r.nodes).map(([name, n]) => stepNode(m, spec, name, n));
  await Promise.all([...work, startNext(m, spec, r)]);
  await startNext(m, spec, r); // steps that ended after an await (Failed, released) may make room too
  const open = Object.values(r.nodes).filter((n) => !finished(n) && (n.held || n.phase === 'Verifying'));
  m.index = open.length ? Math.min(...open.map((n) => n.index ?? 0)) : Object.values(r.nodes).every(finished) ? m.plan.length : 0;
  for (const [name, n] of Object.entries(r.nodes)) if (n.phase === 'AwaitingWork') watchWork(m, spec, name, n);
  armTimer(m, spec);
}

/**
 * One node's way through its phases in this pass (at most a few steps). What needs no I/O (Verifying →
 * Done once released) happens before this returns, so the planner that runs next already counts it.
 */
function stepNode(m: Maintenance, spec: NodeMaintenanceRolloutInput, name: string, n: RolloutNode): Promise<void> {
  const told = advanceNode(m, name, n);
  return told ? told.then(() => walk(m, spec, name, n)) : walk(m, spec, name, n);
}

async function walk(m: Maintenance, spec: NodeMaintenanceRolloutInput, name: string, n: RolloutNode): Promise<void> {
  for (let guard = 0; guard < 8; guard++) {
    const step = nextStep(view(m, spec, name, n));
    if (!step) break;
    if (!(await apply(m, spec, name, n, step)) || !step.to) break;
  }
}

/** The planner's answer acted on: the nodes that may start are registered (their coordinators take a budget slot, then cordon: RM-1.6). */
function startNext(m: Maintenance, spec: NodeMaintenanceRolloutInput, r: RolloutRecord): Promise<void> {
  const p = plannerAnswer(spec, r);
  if (p.stop && !r.stopped) r.stopped = p.stop; // RM-4.4: failures only grow
  for (const name of p.start) {
    const n = r.nodes[name]!;
    n.held = true;
    n.index = 0;
  }
  return tellAll(m, p.start);
}

/**
 * New selected nodes are Waiting in their partition; nodes that left are forgotten (syncMembership
 * released them). Each node learns who else holds it now (RM-1.5).
 */
function syncRecord(m: Maintenance, r: RolloutRecord): void {
  for (const name of m.nodes.keys()) {
    const n = (r.nodes[name] ??= { phase: 'Waiting', partition: m.selection?.partitions?.[name] ?? '', times: [] });
    const who = m.selection?.elsewhere?.[name];
    if (who) n.elsewhere = who;
    else delete n.elsewhere;
  }
  for (const name of Object.keys(r.nodes)) {
    if (m.nodes.has(name)) continue;
    stopNodeEffects(m, name);
    delete r.nodes[name];
  }
}

/** RM-2.3: the A3 rule over this node alone; its coordinator and its drain hear its new position (undefined: nothing to tell). */
function advanceNode(m: Maintenance, name: string, n: RolloutNode): Promise<unknown> | undefined {
  if (!n.held || (n.phase !== 'Cordoned' && n.phase !== 'Draining')) return undefined;
  const node = progressNodes({ nodes: new Map([[name, m.nodes.get(name)]]) });
  const next = advance(m.plan, n.index ?? 0, node);
  if (next === (n.index ?? 0)) return undefined;
  n.index = next;
  return Promise.all([tellAll(m, [name]), tellDrain(m, name)]);
}

function view(m: Maintenance, spec: NodeMaintenanceRolloutInput, name: string, n: RolloutNode) {
  return {
    rec: n,
    report: m.nodes.get(name),
    planLength: m.plan.length,
    released: !m.releasing.has(name),
    checking: m.rolling.checking.has(name),
    nowMs: Date.now(),
    ...(spec.nodeTimeout ? { timeoutMs: parseDuration(spec.nodeTimeout), timeout: spec.nodeTimeout } : {}),
  };
}

/** Carries out a step; false when it must wait (the bootID read is under way in the background). */
async function apply(m: Maintenance, spec: NodeMaintenanceRolloutInput, name: string, n: RolloutNode, step: Step): Promise<boolean> {
  const now = () => new Date().toISOString();
  if (step.effect === 'recordBoot') {
    // RM-3.1: the bootID is in workflow state before the node is called AwaitingWork. The read runs in
    // the background (its answer wakes the loop), so a slow read holds back no other node.
    if (!n.bootRead) {
      readBoot(m, name, n);
      return false;
    }
    const gone = n.bootRead === 'gone';
    n.bootRead = undefined;
    if (gone) return apply(m, spec, name, n, { to: 'Done', message: 'node deleted' });
  }
  if (step.message !== undefined) n.message = step.message;
  if (step.effect === 'release') await letGo(m, name, n);
  if (step.effect === 'verify') {
    const checks = spec.completion.healthChecks ?? [];
    if (checks.length) {
      runChecks(m, name, n, checks);
      return true;
    }
    enter(n, 'Done', now());
  }
  if (!step.to) return true;
  if (step.to !== 'AwaitingWork') stopNodeEffects(m, name);
  enter(n, step.to, now());
  if (step.to === 'Failed' && (spec.nodeTimeoutPolicy ?? 'KeepCordoned') === 'Uncordon') await letGo(m, name, n);
  if (step.to === 'Done') await letGo(m, name, n);
  return true;
}

/** Releases the node from this rollout (its coordinator uncordons it unless someone else holds it). */
export async function letGo(m: Maintenance, name: string, n: RolloutNode): Promise<void> {
  if (!n.held) return;
  n.held = false;
  n.workDone = undefined;
  m.releasing.add(name);
  await release(m, name);
}
