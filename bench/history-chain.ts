// Issue 26 §5: the serial Temporal steps of a NodeMaintenance's hand-over between plan entries,
// counted from the workflow histories (a figure the machine's load cannot change). From each
// eviction a drain schedules, the chain of causes is followed backwards across the histories of the
// maintenances, the node coordinators and their drains: the workflow task that scheduled it, what
// that task was woken by (a signal: then the sender's task that sent it; an activity's completion:
// then the task that scheduled it), and so on, until a drain's wave wait completed (a pod left; the
// chain's start). Each workflow task, signal and activity on the chain is one step. Which events
// can have caused a command follows from what it is (ruleFor): an eviction, new targets; a drain's
// report, a look at its pods; a maintenance's advance, each node's news that it is finished (the
// last node's, by its fastest route: straight from the drain or relayed). An eviction whose chain
// crosses into another workflow is a hand-over (new targets came from outside the drain).

/** One history event, as `fetchHistory()` returns it (proto objects; only what is read here). */
export type HistoryEvent = Record<string, unknown> & { eventId?: unknown; eventTime?: unknown };
export type Histories = Map<string, HistoryEvent[]>;

export interface Ev {
  id: number;
  /** eventTime, ms. */
  ms: number;
  kind: string;
  a: Record<string, any>;
}

/** Long waits: a chain that reaches one ends there (only a wave wait is a hand-over's start). */
/** A wave wait's completion (a pod left; the wait's look shows the node) starts a chain. */
const START = 'waitForWave';
/** An eviction's completion ends a chain too: what follows it is the entry's own wave, not a hand-over. */
const WAITS = new Set([START, 'evictPods', 'watchMaintenanceNode', 'watchMaintenanceSelection', 'waitForDisruptionSlot', 'waitForDrainRuleChange', 'waitForLifecycleHooks', 'waitForVolumeDetach']);
const MAX_DEPTH = 40;

const num = (x: unknown): number => Number(String(x ?? 0));

export function normalize(events: HistoryEvent[]): Ev[] {
  return events.map((e) => {
    const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && e[k]);
    const t = e.eventTime as { seconds?: unknown; nanos?: number } | undefined;
    return { id: num(e.eventId), ms: t ? num(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0, kind: key ? key.replace(/EventAttributes$/, '') : '', a: (key ? e[key] : {}) as Record<string, any> };
  });
}

const payloadKey = (input: any): string => JSON.stringify((input?.payloads ?? []).map((p: any) => Buffer.from(p.data ?? []).toString('base64')));

export interface Chain {
  /** The drain's workflow ID and the evictPods ActivityTaskScheduled event. */
  drain: string;
  eventId: number;
  steps: number;
  /** Each step, latest first: `workflowId: task | signal name | activity type`. */
  path: string[];
}

/**
 * What a command can have been caused by, by what it is: which events woke the task that gave it
 * count, and how several count (`max`: it waited for all; `min`: the first sufficed; `nodes`: a
 * maintenance's check waits for each node's finished news, and takes each by its fastest route).
 */
interface Rule {
  signals: string[];
  activities: string[];
  fold: 'max' | 'min' | 'nodes';
  /** Only news that a node is finished (a maintenance moves on on nothing else). */
  finishedOnly?: boolean;
}
const TARGETS = ['holderAdvanced', 'drainTargets'];
/** An eviction or a look: new targets (taken since the drain's previous eviction: a signal handled by an earlier task counts too), or the look. */
const EVICT: Rule = { signals: TARGETS, activities: ['classifyPods'], fold: 'max' };
function ruleFor(cmd: Ev): Rule | undefined {
  if (cmd.kind === 'activityTaskScheduled') {
    const type = cmd.a.activityType?.name;
    if (type === 'evictPods' || type === 'classifyPods') return EVICT;
    return undefined;
  }
  if (cmd.kind !== 'signalExternalWorkflowExecutionInitiated') return undefined;
  switch (cmd.a.signalName) {
    case 'drainStanding':
    case 'drainProgress':
      return { signals: [], activities: ['classifyPods'], fold: 'min' }; // a look showed the node finished
    case 'holderAdvanced':
    case 'register':
      return { signals: ['drainStanding', 'nodeReport'], activities: [], fold: 'nodes', finishedOnly: true };
    case 'drainTargets':
      return { signals: ['register', 'drainProgress'], activities: [], fold: 'max' };
    case 'nodeReport':
      return { signals: ['drainProgress'], activities: [], fold: 'max' };
    default:
      return undefined;
  }
}

const payload = (e: Ev): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(Buffer.from(e.a.input?.payloads?.[0]?.data ?? []).toString('utf8'));
  } catch {
    return undefined;
  }
};

class Tracer {
  private readonly h = new Map<string, Ev[]>();
  private readonly byId = new Map<string, Map<number, Ev>>();
  private readonly memo = new Map<string, { steps: number; path: string[] } | null>();

  constructor(histories: Histories) {
    for (const [id, events] of histories) {
      const evs = normalize(events);
      this.h.set(id, evs);
      this.byId.set(id, new Map(evs.map((e) => [e.id, e])));
    }
  }

  /** The chain from a wave wait's completion to the command `cmd` of workflow `wf`; null when none starts at one. */
  fromCommand(wf: string, cmd: Ev, depth = 0): { steps: number; path: string[] } | null {
    const rule = ruleFor(cmd);
    const task = num(cmd.a.workflowTaskCompletedEventId);
    const key = `${wf}#${task}#${cmd.a.signalName ?? cmd.a.activityType?.name}`;
    if (this.memo.has(key)) return this.memo.get(key)!;
    this.memo.set(key, null);
    const found: Array<{ news: string; r: { steps: number; path: string[] } }> = [];
    if (rule && depth < MAX_DEPTH) {
      for (const cause of this.causes(wf, task, rule === EVICT ? this.lastEviction(wf, cmd) : undefined)) {
        if (cause.kind === 'workflowExecutionSignaled') {
          if (!rule.signals.includes(cause.a.signalName)) continue;
          const p = payload(cause);
          if (rule.finishedOnly && p?.finished !== true) continue;
          // Once a node's drain has reported straight, the maintenance takes its lanes and finished from it alone.
          if (cause.a.signalName === 'nodeReport' && this.heardStraight(wf, String(p?.node), cause.id)) continue;
          const r = this.fromSignal(wf, cause, depth);
          // New targets: each maintenance's advance is news of its own; the coordinator's targets repeat them.
          const news = rule.fold === 'nodes' ? String(p?.node) : cause.a.signalName === 'holderAdvanced' ? `advance ${p?.id}` : cause.a.signalName === 'drainTargets' ? 'targets' : `${cause.id}`;
          if (r) found.push({ news, r });
        } else {
          const scheduled = this.byId.get(wf)!.get(num(cause.a.scheduledEventId));
          const type = scheduled?.a.activityType?.name as string | undefined;
          if (!scheduled || !type) continue;
          if (type === START) found.push({ news: `${cause.id}`, r: { steps: 0, path: [] } });
          else if (rule.activities.includes(type)) {
            const r = this.fromCommand(wf, scheduled, depth + 1);
            if (r) found.push({ news: `${cause.id}`, r: { steps: r.steps + 1, path: [`${wf}: activity ${type}`, ...r.path] } });
          }
        }
      }
    }
    // The same news sent straight but delivered after the relay (the server's order under load):
    // the route the design offers counts, not the race (a figure the machine's load cannot change).
    if (rule && depth < MAX_DEPTH) for (const f of this.sentStraight(wf, task, cmd, rule)) found.push(f);
    // Lanes grown by advances the drain applied itself: the coordinator's targets only confirmed them.
    if (found.some((f) => f.news.startsWith('advance '))) found.splice(0, found.length, ...found.filter((f) => f.news !== 'targets'));
    let best: { steps: number; path: string[] } | null = null;
    if (rule?.fold === 'min') {
      for (const f of found) if (!best || f.r.steps < best.steps) best = f.r;
    } else {
      const byNews = new Map<string, { steps: number; path: string[] }>();
      for (const f of found) if (!byNews.has(f.news) || f.r.steps < byNews.get(f.news)!.steps) byNews.set(f.news, f.r);
      for (const r of byNews.values()) if (!best || r.steps > best.steps) best = r;
    }
    const out = best && { steps: best.steps + 1, path: [`${wf}: task`, ...best.path] };
    this.memo.set(key, out);
    return out;
  }

  private fromSignal(wf: string, cause: Ev, depth: number): { steps: number; path: string[] } | null {
    const sender = this.sender(wf, cause);
    if (!sender) return null;
    const r = this.fromCommand(sender.wf, sender.ev, depth + 1);
    return r && { steps: r.steps + 1, path: [`${sender.wf} → ${wf}: signal ${cause.a.signalName}`, ...r.path] };
  }

  /** What woke the workflow task completed at `task`: the events that arrived since the task before it. */
  private causes(wf: string, task: number, since?: number): Ev[] {
    const evs = this.h.get(wf)!;
    const done = this.byId.get(wf)!.get(task);
    const started = num(done?.a.startedEventId);
    const prev = [...evs].reverse().find((e) => e.kind === 'workflowTaskCompleted' && e.id < started)?.id ?? 0;
    const inWindow = (e: Ev) => e.id > prev && e.id < started;
    const targetsSince = (e: Ev) => since !== undefined && e.id > since && e.id < started && e.kind === 'workflowExecutionSignaled' && TARGETS.includes(e.a.signalName);
    return evs.filter((e) => targetsSince(e) || (inWindow(e) && (e.kind === 'workflowExecutionSignaled' || e.kind === 'activityTaskCompleted' || e.kind === 'activityTaskFailed')));
  }

  /**
   * Signals sent straight to `wf` before its task `task` started (maybe delivered later): for an
   * eviction, the advances sent to this drain since its previous eviction; for a maintenance's
   * advance, the drains' finished news sent since its previous task.
   */
  private sentStraight(wf: string, task: number, cmd: Ev, rule: Rule): Array<{ news: string; r: { steps: number; path: string[] } }> {
    const name = rule === EVICT ? 'holderAdvanced' : rule.fold === 'nodes' ? 'drainStanding' : undefined;
    if (!name) return [];
    const evs = this.h.get(wf)!;
    const done = this.byId.get(wf)!.get(task);
    const startedMs = this.byId.get(wf)!.get(num(done?.a.startedEventId))?.ms ?? Infinity;
    const prevTask = [...evs].reverse().find((e) => e.kind === 'workflowTaskCompleted' && e.id < num(done?.a.startedEventId));
    const fromMs = rule === EVICT ? (this.byId.get(wf)!.get(this.lastEviction(wf, cmd))?.ms ?? 0) : (prevTask?.ms ?? 0);
    const out: Array<{ news: string; r: { steps: number; path: string[] } }> = [];
    for (const [id, list] of this.h) {
      for (const e of list) {
        if (e.kind !== 'signalExternalWorkflowExecutionInitiated' || e.a.signalName !== name || e.a.workflowExecution?.workflowId !== wf) continue;
        if (e.ms <= fromMs || e.ms > startedMs) continue;
        const p = payload(e);
        if (rule.finishedOnly && p?.finished !== true) continue;
        const r = this.fromCommand(id, e, 1);
        if (r) out.push({ news: name === 'holderAdvanced' ? `advance ${p?.id}` : String(p?.node), r: { steps: r.steps + 1, path: [`${id} → ${wf}: signal ${name}`, ...r.path] } });
      }
    }
    return out;
  }

  /** Whether `wf` had received a drainStanding about `node` before event `before`. */
  private heardStraight(wf: string, node: string, before: number): boolean {
    return this.h.get(wf)!.some((e) => e.id < before && e.kind === 'workflowExecutionSignaled' && e.a.signalName === 'drainStanding' && payload(e)?.node === node);
  }

  /** The drain's eviction before `cmd` (its event ID; 0 when none). */
  private lastEviction(wf: string, cmd: Ev): number {
    return [...this.h.get(wf)!].reverse().find((e) => e.id < cmd.id && e.kind === 'activityTaskScheduled' && e.a.activityType?.name === 'evictPods')?.id ?? 0;
  }

  /** The SignalExternalWorkflowExecutionInitiated that sent `signaled` to `wf` (same name and payload; the latest before it). */
  private sender(wf: string, signaled: Ev): { wf: string; ev: Ev } | undefined {
    const ext = signaled.a.externalWorkflowExecution?.workflowId as string | undefined;
    const want = payloadKey(signaled.a.input);
    let best: { wf: string; ev: Ev } | undefined;
    for (const [id, evs] of this.h) {
      if (ext && id !== ext) continue;
      for (const e of evs) {
        if (e.kind !== 'signalExternalWorkflowExecutionInitiated' || e.a.workflowExecution?.workflowId !== wf || e.a.signalName !== signaled.a.signalName) continue;
        if (e.ms > signaled.ms || payloadKey(e.a.input) !== want) continue;
        if (!best || e.ms >= best.ev.ms) best = { wf: id, ev: e };
      }
    }
    return best;
  }

  evictions(): Array<{ wf: string; ev: Ev }> {
    return [...this.h].flatMap(([wf, evs]) => evs.filter((e) => e.kind === 'activityTaskScheduled' && e.a.activityType?.name === 'evictPods').map((ev) => ({ wf, ev })));
  }
}

/** Every hand-over in the histories: an eviction whose chain of causes crosses into another workflow. */
export function handoverChains(histories: Histories): Chain[] {
  const t = new Tracer(histories);
  const out: Chain[] = [];
  for (const { wf, ev } of t.evictions()) {
    const r = t.fromCommand(wf, ev);
    if (r && r.path.some((p) => !p.startsWith(`${wf}:`))) out.push({ drain: wf, eventId: ev.id, steps: r.steps, path: r.path });
  }
  return out;
}
