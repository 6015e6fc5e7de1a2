// The rollout's waits, each in the background and each waking the maintenance's loop when it
// answers: a completion watch per AwaitingWork node (RM-3.5), the health checks of a Verifying node
// (RM-3.6), and one timer on the earliest nodeTimeout (RM-4.1), armed only while a node is timed.
// Nothing here is carried across continue-as-new: the next run arms them again from the record.
import { CancellationScope, sleep } from '@temporalio/workflow';
import { parseDuration } from '../../../api/duration-text.js';
import type { NodeMaintenanceRolloutInput as Spec } from '../../../api/rollout.js';
type HealthCheck = NonNullable<Spec['completion']['healthChecks']>[number];
import type { NodeMaintenanceRolloutInput } from '../../../api/rollout.js';
import { longSteps, steps, watchSteps } from '../../proxies.js';
import { fill } from '../../cycle/steps.js';
import type { Maintenance } from '../maintenance.js';
import { deadlineMs } from './phases.js';
import { enter, TIMED, type RolloutNode } from './record.js';

/** The watch returns at the latest after 20 minutes (RENEW_MS), so half an hour bounds it. */
const waits = watchSteps('30 minutes');
/** Health checks poll until each passes once or its waitPeriod ends. */
const checkSteps = longSteps('25 hours');
const CHECK_LIMIT_MS = 24 * 3600_000;

/** What one run of the rollout has in flight (not carried). */
export class RollingRun {
  readonly watches = new Map<string, { key: string; scope: CancellationScope }>();
  readonly checking = new Set<string>();
  /** bootID reads under way (RM-3.1); the answer is recorded in the node's record. */
  readonly reading = new Set<string>();
  timer?: { at: number; scope: CancellationScope };
}

/** RM-3.2, RM-3.3: watch the node until its work is seen done (or it is gone); re-armed at its renewal. */
export function watchWork(m: Maintenance, spec: NodeMaintenanceRolloutInput, name: string, n: RolloutNode): void {
  const c = spec.completion;
  if (n.workDone || (!c.reboot && !c.annotation)) return; // manual only: the operator's word (or the coordinator's "gone")
  const input = { node: name, maintenance: m.name, ...(n.bootID ? { bootID: n.bootID } : {}), ...(n.uid ? { uid: n.uid } : {}), reboot: !!c.reboot, annotation: !!c.annotation };
  const key = JSON.stringify(input);
  if (m.rolling.watches.get(name)?.key === key) return;
  m.rolling.watches.get(name)?.scope.cancel();
  const scope = new CancellationScope();
  const w = { key, scope };
  m.rolling.watches.set(name, w);
  scope
    .run(() => waits.watchRolloutNode.executeWithOptions({ summary: `wait for the work on ${name}` }, [input]))
    .then(
      (r) => {
        if (m.rolling.watches.get(name) !== w) return;
        m.rolling.watches.delete(name);
        if (r.done && n.phase === 'AwaitingWork') n.workDone = r.done;
        m.dirty = true; // done: the loop releases it; renewal: the loop arms it again
      },
      () => {
        if (m.rolling.watches.get(name) === w) m.rolling.watches.delete(name);
      },
    );
}

/**
 * RM-3.1: the node's bootID read fresh, in the background. The answer goes into the node's record
 * (carried: a renewal right after it loses nothing) and wakes the loop, which then calls it AwaitingWork.
 */
export function readBoot(m: Maintenance, name: string, n: RolloutNode): void {
  if (m.rolling.reading.has(name)) return;
  m.rolling.reading.add(name);
  void steps.readRolloutNode.executeWithOptions({ summary: `read the bootID of ${name}` }, [{ node: name }]).then(
    (facts) => {
      if (!m.rolling.reading.delete(name) || m.rollout?.nodes[name] !== n || n.phase !== 'Draining') return; // it moved on meanwhile
      if (facts.bootID) n.bootID = facts.bootID;
      if (facts.uid) n.uid = facts.uid; // RM-3.2: a node re-created under its name is no reboot
      if (facts.internalIP) n.ip = facts.internalIP;
      n.bootRead = facts.exists ? 'read' : 'gone';
      m.dirty = true;
    },
    () => {
      m.rolling.reading.delete(name); // asked again on the next pass
      m.dirty = true;
    },
  );
}

/** RM-3.6: the node's health checks (the CycleNodeRequest's activity), then Done or Failed. */
export function runChecks(m: Maintenance, name: string, n: RolloutNode, checks: HealthCheck[]): void {
  m.rolling.checking.add(name);
  const input = { nodes: [{ name, ...(n.ip ? { internalIP: n.ip } : {}) }], checks: fill(checks), maxWaitMs: CHECK_LIMIT_MS };
  void checkSteps.healthCheckNodes.executeWithOptions({ summary: `health checks on ${name}` }, [input]).then(
    (r) => {
      m.rolling.checking.delete(name);
      if (n.phase !== 'Verifying') return;
      if (r.passed) enter(n, 'Done', new Date().toISOString());
      else {
        n.message = `health checks failed: ${r.failures.join('; ')}`;
        enter(n, 'Failed', new Date().toISOString());
      }
      m.dirty = true;
    },
    () => m.rolling.checking.delete(name),
  );
}

/** RM-4.1: one timer, on the earliest deadline of the nodes still timed; none when no node is. */
export function armTimer(m: Maintenance, spec: NodeMaintenanceRolloutInput): void {
  const timeoutMs = spec.nodeTimeout ? parseDuration(spec.nodeTimeout) : undefined;
  const due = Object.values(m.rollout?.nodes ?? {})
    .filter((n) => n.held && TIMED.includes(n.phase))
    .map((n) => deadlineMs(n, timeoutMs))
    .filter((d): d is number => d !== undefined);
  const at = due.length ? Math.min(...due) : undefined;
  if (m.rolling.timer?.at === at) return;
  m.rolling.timer?.scope.cancel();
  m.rolling.timer = undefined;
  if (at === undefined) return;
  const scope = new CancellationScope();
  const t = { at, scope };
  m.rolling.timer = t;
  scope
    .run(() => sleep(Math.max(1, at - Date.now())))
    .then(
      () => {
        if (m.rolling.timer !== t) return;
        m.rolling.timer = undefined;
        m.dirty = true;
      },
      () => undefined,
    );
}

/** The node left AwaitingWork (or the rollout): its watch is no longer needed. */
export function stopNodeEffects(m: Maintenance, name: string): void {
  m.rolling.reading.delete(name);
  m.rolling.watches.get(name)?.scope.cancel();
  m.rolling.watches.delete(name);
}

/** Complete: every wait of the rollout stops. */
export function stopRolling(m: Maintenance): void {
  for (const name of [...m.rolling.watches.keys()]) stopNodeEffects(m, name);
  m.rolling.reading.clear();
  m.rolling.timer?.scope.cancel();
  m.rolling.timer = undefined;
}
