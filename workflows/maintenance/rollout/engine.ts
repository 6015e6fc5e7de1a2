// The rollout engine (docs/rolling-maintenance.md): in Drain with spec.rollout, one pass per change
// of the maintenance's loop (stages/hold.ts). Each started node walks the drain plan at its own
// position and then through its phases (phases.ts); the planner (plan.ts) starts the next nodes.
// The waits are the completion watches and one timer on the earliest nodeTimeout (effects.ts), so
// a rollout with nothing changing costs no history.
import { parseDuration } from '../../../api/duration-text.js';
import type { NodeMaintenanceRolloutInput } from '../../../api/rollout.js';
import { steps } from '../../proxies.js';
import { advance } from '../progress.js';
import { progressNodes } from '../status.js';
import type { Maintenance } from '../maintenance.js';
import { release, tellAll, tellDrain } from '../stages/members.js';
import { armTimer, runChecks, stopNodeEffects, watchWork } from './effects.js';
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
  for (const [name, n] of Object.entries(r.nodes)) {
    await advanceNode(m, name, n);
    for (let guard = 0; guard < 8; guard++) {
      const step = nextStep(view(m, spec, name, n));
      if (!step) break;
      await apply(m, spec, name, n, step);
      if (!step.to) break;
    }
  }
  const p = plannerAnswer(spec, r);
  if (p.stop && !r.stopped) r.stopped = p.stop; // RM-4.4: failures only grow
  for (const name of p.start) {
    const n = r.nodes[name]!;
    n.held = true;
    n.index = 0;
  }
  await tellAll(m, p.start); // their coordinators take a budget slot, then cordon (RM-1.6)
  const open = Object.values(r.nodes).filter((n) => !finished(n) && (n.held || n.phase === 'Verifying'));
  m.index = open.length ? Math.min(...open.map((n) => n.index ?? 0)) : Object.values(r.nodes).every(finished) ? m.plan.length : 0;
  for (const [name, n] of Object.entries(r.nodes)) if (n.phase === 'AwaitingWork') watchWork(m, spec, name, n);
  armTimer(m, spec);
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

/** RM-2.3: the A3 rule over this node alone; its coordinator and its drain hear its new position. */
async function advanceNode(m: Maintenance, name: string, n: RolloutNode): Promise<void> {
  if (!n.held || (n.phase !== 'Cordoned' && n.phase !== 'Draining')) return;
  const node = progressNodes({ nodes: new Map([[name, m.nodes.get(name)]]) });
  const next = advance(m.plan, n.index ?? 0, node);
  if (next === (n.index ?? 0)) return;
  n.index = next;
  await Promise.all([tellAll(m, [name]), tellDrain(m, name)]);
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

async function apply(m: Maintenance, spec: NodeMaintenanceRolloutInput, name: string, n: RolloutNode, step: Step): Promise<void> {
  const now = () => new Date().toISOString();
  if (step.message !== undefined) n.message = step.message;
  if (step.effect === 'recordBoot') {
    // RM-3.1: the bootID is in workflow state before the node is called AwaitingWork.
    const facts = await steps.readRolloutNode.executeWithOptions({ summary: `read the bootID of ${name}` }, [{ node: name }]);
    if (!facts.exists) return apply(m, spec, name, n, { to: 'Done', message: 'node deleted' });
    if (facts.bootID) n.bootID = facts.bootID;
    if (facts.uid) n.uid = facts.uid;
    if (facts.internalIP) n.ip = facts.internalIP;
  }
  if (step.effect === 'release') await letGo(m, name, n);
  if (step.effect === 'verify') {
    const checks = spec.completion.healthChecks ?? [];
    if (checks.length) return runChecks(m, name, n, checks);
    enter(n, 'Done', now());
  }
  if (!step.to) return;
  if (step.to !== 'AwaitingWork') stopNodeEffects(m, name);
  enter(n, step.to, now());
  if (step.to === 'Failed' && (spec.nodeTimeoutPolicy ?? 'KeepCordoned') === 'Uncordon') await letGo(m, name, n);
  if (step.to === 'Done') await letGo(m, name, n);
}

/** Releases the node from this rollout (its coordinator uncordons it unless someone else holds it). */
export async function letGo(m: Maintenance, name: string, n: RolloutNode): Promise<void> {
  if (!n.held) return;
  n.held = false;
  n.workDone = undefined;
  m.releasing.add(name);
  await release(m, name);
}
