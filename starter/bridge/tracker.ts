// Follows the workflows of the objects (of one kind) the bridge owns, at a cost that grows with
// their changes, not with their number × time: one history long-poll per workflow (Temporal answers
// when events are added), a status query only after a workflow task has completed (the only moment
// its state can change; at most one in flight and one per queryIntervalMs per workflow), and a look
// for a workflow task that keeps failing only when its history shows task trouble, its queries fail,
// or it has children (whose tasks are not in its history). An Idle workflow costs one long-poll per
// Temporal long-poll interval and nothing of the worker. Every new state, failure or close is
// reported by key, and the reconciler turns it into status.
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { canonical } from '../../api/canonical.js';
import type { ClosedWorkflow } from './workflow-status.js';
import type { TaskFailure } from './task-failure.js';
import type { TrackedSource } from './temporal.js';
import type { Log } from '../../shared/log.js';

/** S: what the workflow's status query answers (CycleStatus for a request). */
export interface Tracked<S = CycleStatus> {
  /** The object's key (namespace/name; /name when cluster-scoped). */
  key: string;
  uid: string;
  workflowId: string;
  runId?: string;
  /** The generation the workflow runs (status.observedGeneration). */
  generation?: number;
  /** The latest status query answer. */
  state?: S;
  /** Set once the workflow is closed. */
  closed?: ClosedWorkflow<S>;
  /** A workflow task of it (or of a child) failing again and again, while it runs. */
  taskFailure?: TaskFailure;
  cancelRequested: boolean;
}

interface Internal<S> extends Tracked<S> {
  stateKey?: string;
  querying: boolean;
  /** A completed workflow task since the last query was sent: query (again). */
  queryWanted: boolean;
  queryTimer?: NodeJS.Timeout;
  lastQueryAt: number;
  /** When a completed workflow task was first seen since the last query was sent (the mirror's lag starts there). */
  ranAt?: number;
  failures: number;
  lastError?: string;
  /** The newest workflow-task outcome in its history was a failure or a timeout. */
  taskTrouble: boolean;
  /** Children ran at the last look (their failing tasks are looked for on a timer). */
  children: boolean;
  checkingTasks: boolean;
  nextTaskCheck: number;
  lastTaskError?: string;
  abort: AbortController;
}

export interface TrackerOptions<S> {
  /** The status query's answer has the expected shape (a wrong one counts as a failed query). */
  isState: (v: unknown) => v is S;
  /** The query's name, for log lines. */
  queryName: string;
  /** At most one status query per workflow per this interval, however busy its history. */
  queryIntervalMs: number;
  queryTimeoutMs: number;
  /** How often a workflow tree with children, task trouble or failing queries is checked for a failing workflow task. */
  taskCheckIntervalMs: number;
  onChange: (key: string) => void;
  log: Log;
  /** Where to count what following costs (shared by the bridge's trackers; a benchmark prints it). */
  counts?: TrackerCounts;
  /** Each new state (query answers that differ, and the state after the close), for metrics. */
  onState?: (uid: string, state: S) => void;
  /** Milliseconds from a completed workflow task seen in the history to the query answer that follows it (metrics). */
  onLag?: (ms: number) => void;
}

/** What following workflows costs Temporal (history long-polls answered, task checks) and the worker (status queries). */
export interface TrackerCounts {
  statusQueries: number;
  historyPolls: number;
  taskChecks: number;
}

export class WorkflowTrackers<S = CycleStatus> {
  private readonly byUid = new Map<string, Internal<S>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly counts: TrackerCounts;

  constructor(
    private readonly workflows: TrackedSource<S>,
    private readonly o: TrackerOptions<S>,
  ) {
    this.counts = o.counts ?? { statusQueries: 0, historyPolls: 0, taskChecks: 0 };
  }

  get(uid: string): Tracked<S> | undefined {
    return this.byUid.get(uid);
  }

  /** Starts following a workflow (idempotent per uid). */
  track(t: Omit<Tracked<S>, 'cancelRequested' | 'state' | 'closed'>): Tracked<S> {
    const cur = this.byUid.get(t.uid);
    if (cur) return cur;
    const it: Internal<S> = {
      ...t,
      cancelRequested: false,
      querying: false,
      queryWanted: false,
      lastQueryAt: 0,
      failures: 0,
      taskTrouble: false,
      children: false,
      checkingTasks: false,
      nextTaskCheck: 0,
      abort: new AbortController(),
    };
    this.byUid.set(t.uid, it);
    void this.follow(it);
    return it;
  }

  untrack(uid: string): void {
    const t = this.byUid.get(uid);
    if (!t) return;
    this.forget(t);
    this.byUid.delete(uid);
  }

  /** The workflows followed for `key` (more than one only while a recreated object's old one is forgotten). */
  byKey(key: string): Tracked<S>[] {
    return [...this.byUid.values()].filter((t) => t.key === key);
  }

  /** Forgets every workflow of `key` except the one of `keepUid` (the object is gone or was recreated). */
  untrackKey(key: string, keepUid?: string): void {
    for (const t of [...this.byUid.values()]) if (t.key === key && t.uid !== keepUid) this.untrack(t.uid);
  }

  get active(): number {
    let n = 0;
    for (const t of this.byUid.values()) if (!t.closed) n++;
    return n;
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), Math.min(this.o.taskCheckIntervalMs, 1000));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const t of this.byUid.values()) this.forget(t);
    this.byUid.clear();
  }

  private forget(t: Internal<S>): void {
    t.abort.abort();
    if (t.queryTimer) clearTimeout(t.queryTimer);
  }

  private live(t: Internal<S>): boolean {
    return !this.stopped && !t.abort.signal.aborted && this.byUid.get(t.uid) === t;
  }

  /**
   * Follows the workflow's history until it closes (retrying through connection trouble, and
   * starting over from a fresh describe, which re-reads its state), then reports the close.
   */
  private async follow(t: Internal<S>): Promise<void> {
    let delay = 500;
    while (this.live(t)) {
      try {
        for await (const b of this.workflows.follow(t.workflowId, t.abort.signal)) {
          this.counts.historyPolls++;
          delay = 500;
          if (b.task === 'trouble' && !t.taskTrouble) t.nextTaskCheck = 0; // look now
          if (b.task) t.taskTrouble = b.task === 'trouble';
          if (b.childStarted && !t.children) (t.children = true), (t.nextTaskCheck = 0);
          if (b.ran) {
            t.ranAt ??= Date.now();
            this.wantQuery(t);
          }
        }
        if (!this.live(t)) return;
        t.closed = await this.workflows.waitClosed(t.workflowId, t.abort.signal);
        if (!this.live(t)) return;
        if (t.queryTimer) clearTimeout(t.queryTimer);
        this.o.log(`workflow ${t.workflowId} closed: ${t.closed.statusName}`, { workflowId: t.workflowId });
        const last = t.closed.finalState ?? (this.o.isState(t.closed.result) ? t.closed.result : undefined);
        if (last !== undefined) this.o.onState?.(t.uid, last);
        this.o.onChange(t.key);
        return;
      } catch (err) {
        if (!this.live(t)) return;
        this.o.log(`following ${t.workflowId}: ${errorText(err)} (retrying in ${delay} ms)`, { workflowId: t.workflowId, level: 'warn' });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  /** A query is due: at once, or when the last one is done and queryIntervalMs has passed since it was sent. */
  private wantQuery(t: Internal<S>, after = 0): void {
    t.queryWanted = true;
    if (t.querying || t.queryTimer || t.closed) return;
    const wait = Math.max(after, t.lastQueryAt + this.o.queryIntervalMs - Date.now(), 0);
    t.queryTimer = setTimeout(() => {
      t.queryTimer = undefined;
      this.query(t);
    }, wait);
  }

  private query(t: Internal<S>): void {
    if (!this.live(t) || t.closed) return;
    t.queryWanted = false;
    t.querying = true;
    t.lastQueryAt = Date.now();
    const ranAt = t.ranAt;
    t.ranAt = undefined;
    this.counts.statusQueries++;
    let retryAfter = 0;
    this.workflows
      .query(t.workflowId, this.o.queryTimeoutMs)
      .then((state) => {
        if (!this.o.isState(state)) throw new Error(`${this.o.queryName} answered ${JSON.stringify(state)?.slice(0, 200)}, not its status`);
        t.failures = 0;
        t.lastError = undefined;
        if (ranAt !== undefined) this.o.onLag?.(Date.now() - ranAt);
        const k = canonical(state);
        if (k === t.stateKey || t.closed) return;
        t.state = state;
        t.stateKey = k;
        this.o.onState?.(t.uid, state);
        this.o.onChange(t.key);
      })
      .catch((err: unknown) => {
        // No worker, or its task failing: ask again (backing off), and look for a failing task.
        t.failures++;
        t.queryWanted = true;
        if (ranAt !== undefined) t.ranAt ??= ranAt; // the lag goes on until an answer
        retryAfter = Math.min(this.o.queryIntervalMs * 2 ** Math.min(t.failures, 5), 10_000);
        const msg = errorText(err);
        if (msg !== t.lastError && !t.closed && this.live(t)) this.o.log(`query ${t.workflowId}: ${msg} (retrying)`, { workflowId: t.workflowId, level: 'warn' });
        t.lastError = msg;
      })
      .finally(() => {
        t.querying = false;
        if (t.queryWanted && this.live(t)) this.wantQuery(t, retryAfter);
      });
  }

  /** Looks for failing workflow tasks where the history alone cannot tell: children, task trouble, failing queries. */
  private tick(): void {
    const now = Date.now();
    for (const t of this.byUid.values()) {
      if (t.closed || t.checkingTasks || now < t.nextTaskCheck) continue;
      if (t.children || t.taskTrouble || t.failures > 0 || t.taskFailure) this.checkTasks(t);
    }
  }

  /** Looks for a workflow task failing in the workflow's tree; reports when that changes. */
  private checkTasks(t: Internal<S>): void {
    t.checkingTasks = true;
    this.counts.taskChecks++;
    this.workflows
      .taskFailure(t.workflowId)
      .then(({ failure: f, children }) => {
        t.lastTaskError = undefined;
        t.children = children;
        if (t.closed || !this.live(t)) return;
        // Only what identifies the failure counts as a change, not its growing attempt number.
        const key = (x: TaskFailure | undefined) => (x ? `${x.workflowId}/${x.runId}/${x.eventId}/${x.error}` : '');
        const changed = key(f) !== key(t.taskFailure);
        t.taskFailure = f;
        if (!changed) return;
        this.o.log(f ? `workflow task of ${f.workflowId} failing (attempt ${f.attempt}): ${f.error}` : `workflow ${t.workflowId}: no failing workflow task any more`, { workflowId: f ? f.workflowId : t.workflowId, level: f ? 'warn' : 'info' });
        this.o.onChange(t.key);
      })
      .catch((err: unknown) => {
        const msg = errorText(err);
        if (msg !== t.lastTaskError && !t.closed && this.live(t)) this.o.log(`checking ${t.workflowId} for failing workflow tasks: ${msg} (retrying)`, { workflowId: t.workflowId, level: 'warn' });
        t.lastTaskError = msg;
      })
      .finally(() => {
        t.checkingTasks = false;
        t.nextTaskCheck = Date.now() + this.o.taskCheckIntervalMs;
      });
  }
}

/** The error and its cause (the SDK's "Failed to query Workflow" says why only in the cause). */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : undefined;
  return detail && !err.message.includes(detail) ? `${err.message}: ${detail}` : err.message;
}
