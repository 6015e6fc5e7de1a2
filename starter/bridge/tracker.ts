// Follows the workflows of the objects (of one kind) the bridge owns: one status query per running workflow
// per tick (skipped while the previous one is in flight, backed off while it fails), one long-poll
// per workflow for its close, and, less often, a look for a workflow task that keeps failing in it
// or its children (the workflow still shows as running then, and its queries may fail too). Every
// new state, failure or close is reported by key, and the reconciler turns it into status.
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { canonical, type ClosedWorkflow } from './status.js';
import type { TaskFailure } from './task-failure.js';
import type { TrackedSource } from './temporal.js';

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
  failures: number;
  notBefore: number;
  lastError?: string;
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
  pollIntervalMs: number;
  queryTimeoutMs: number;
  /** How often each running workflow tree is checked for a failing workflow task. */
  taskCheckIntervalMs: number;
  onChange: (key: string) => void;
  log: (msg: string) => void;
}

export class WorkflowTrackers<S = CycleStatus> {
  private readonly byUid = new Map<string, Internal<S>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly workflows: TrackedSource<S>,
    private readonly o: TrackerOptions<S>,
  ) {}

  get(uid: string): Tracked<S> | undefined {
    return this.byUid.get(uid);
  }

  /** Starts following a workflow (idempotent per uid). */
  track(t: Omit<Tracked<S>, 'cancelRequested' | 'state' | 'closed'>): Tracked<S> {
    const cur = this.byUid.get(t.uid);
    if (cur) return cur;
    const it: Internal<S> = { ...t, cancelRequested: false, querying: false, failures: 0, notBefore: 0, checkingTasks: false, nextTaskCheck: 0, abort: new AbortController() };
    this.byUid.set(t.uid, it);
    void this.watchClose(it);
    return it;
  }

  untrack(uid: string): void {
    const t = this.byUid.get(uid);
    if (!t) return;
    t.abort.abort();
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
    this.timer ??= setInterval(() => this.tick(), this.o.pollIntervalMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const t of this.byUid.values()) t.abort.abort();
    this.byUid.clear();
  }

  /** One query per running workflow that has none in flight and is not backing off. */
  private tick(): void {
    const now = Date.now();
    for (const t of this.byUid.values()) {
      if (!t.closed && !t.checkingTasks && now >= t.nextTaskCheck) this.checkTasks(t);
      if (t.closed || t.querying || now < t.notBefore) continue;
      t.querying = true;
      this.workflows
        .query(t.workflowId, this.o.queryTimeoutMs)
        .then((state) => {
          t.failures = 0;
          t.lastError = undefined;
          if (!this.o.isState(state)) throw new Error(`${this.o.queryName} answered ${JSON.stringify(state)?.slice(0, 200)}, not its status`);
          const k = canonical(state);
          if (k === t.stateKey || t.closed) return;
          t.state = state;
          t.stateKey = k;
          this.o.onChange(t.key);
        })
        .catch((err: unknown) => {
          t.failures++;
          t.notBefore = Date.now() + Math.min(this.o.pollIntervalMs * 2 ** Math.min(t.failures, 5), 10_000);
          const msg = errorText(err);
          if (msg !== t.lastError && !t.closed && this.byUid.get(t.uid) === t) this.o.log(`query ${t.workflowId}: ${msg} (retrying)`);
          t.lastError = msg;
        })
        .finally(() => {
          t.querying = false;
        });
    }
  }

  /** Looks for a workflow task failing in the workflow's tree; reports when that changes. */
  private checkTasks(t: Internal<S>): void {
    t.checkingTasks = true;
    this.workflows
      .taskFailure(t.workflowId)
      .then((f) => {
        t.lastTaskError = undefined;
        if (t.closed || this.byUid.get(t.uid) !== t) return;
        // Only what identifies the failure counts as a change, not its growing attempt number.
        const key = (x: TaskFailure | undefined) => (x ? `${x.workflowId}/${x.runId}/${x.eventId}/${x.error}` : '');
        const changed = key(f) !== key(t.taskFailure);
        t.taskFailure = f;
        if (!changed) return;
        this.o.log(f ? `workflow task of ${f.workflowId} failing (attempt ${f.attempt}): ${f.error}` : `workflow ${t.workflowId}: no failing workflow task any more`);
        this.o.onChange(t.key);
      })
      .catch((err: unknown) => {
        const msg = errorText(err);
        if (msg !== t.lastTaskError && !t.closed && this.byUid.get(t.uid) === t) this.o.log(`checking ${t.workflowId} for failing workflow tasks: ${msg} (retrying)`);
        t.lastTaskError = msg;
      })
      .finally(() => {
        t.checkingTasks = false;
        t.nextTaskCheck = Date.now() + this.o.taskCheckIntervalMs;
      });
  }

  /** Waits for the workflow to close (retrying through connection trouble), then reports it. */
  private async watchClose(t: Internal<S>): Promise<void> {
    let delay = 500;
    while (!this.stopped && !t.abort.signal.aborted) {
      try {
        t.closed = await this.workflows.waitClosed(t.workflowId, t.abort.signal);
        if (t.abort.signal.aborted) return;
        this.o.log(`workflow ${t.workflowId} closed: ${t.closed.statusName}`);
        this.o.onChange(t.key);
        return;
      } catch (err) {
        if (t.abort.signal.aborted) return;
        this.o.log(`waiting for ${t.workflowId} to close: ${err instanceof Error ? err.message : String(err)} (retrying in ${delay} ms)`);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }
}

/** The error and its cause (the SDK's "Failed to query Workflow" says why only in the cause). */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : undefined;
  return detail && !err.message.includes(detail) ? `${err.message}: ${detail}` : err.message;
}
