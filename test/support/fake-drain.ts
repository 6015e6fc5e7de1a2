// Scripted stand-ins for the drain's activities, for workflow tests (test/workflow/): a node and its
// pods as the classify activity would report them, which the test changes as it goes, and answers
// that follow the real activities' contracts (activities/drain/*.ts): evictions refused while a
// "PDB" says so, pods that leave after evicting, waits that end on the same events as the real
// ones and stop when the workflow cancels them. Every call is logged for the test to assert on.
// The cluster is not the point here (the integration tests cover it); the workflow's decisions are.
import { Context } from '@temporalio/activity';
import { DrainOptions, type DrainOptionsInput } from '../../api/drain-options.js';
import type { DeleteInput, EvictInput, EvictResult } from '../../activities/drain/evict.js';
import { drainSettings, type ClassifyInput } from '../../activities/drain/snapshot.js';
import { keptReason } from '../../activities/drain/classify.js';
import { targeted, type Lane } from '../../api/drain-plan.js';
import type { VolumeWaitInput, VolumeWaitResult } from '../../activities/drain/volumes.js';
import type { WaveWaitEnd, WaveWaitInput, WaveWaitResult } from '../../activities/drain/wave-wait.js';
import type { EventInput } from '../../activities/events.js';
import type { EvacuateInput, EvacuationState } from '../../activities/drain/evacuate.js';
import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { DrainResult } from '../../workflows/drain/drain.js';
import type { DrainReport, DrainTargets } from '../../workflows/messages.js';
import type { DrainStatus } from '../../workflows/drain/status.js';
import { drainWorkflow } from '../../workflows/index.js';
import { drainStatusQuery } from '../../workflows/messages.js';
import { CallLog, until } from './scripted.js';
import { FakeBudget } from './fake-budget.js';
import { waitFor } from './wait.js';
import type { WorkerChoice, WorkflowTestEnv } from './workflow-env.js';
import { podKey, type DrainSnapshot, type NodeFacts, type PodRef, type PodVerdict } from '../../shared/drain.js';
import { drainWorkflowId } from '../../workflows/ids.js';

/**
 * How long a workflow test waits for a state it expects. Locally these take a second or two; CI runs
 * them beside the whole local stack on 2 cores, where a starved worker once needed more than 15 s.
 */
const WAIT_MS = 45_000;

/** A pod as classifyPods reports it; defaults: namespace `app`, Evict at order 0, Running. */
export function pod(name: string, o: Partial<PodVerdict> = {}): PodVerdict {
  return {
    namespace: 'app',
    name,
    uid: `uid-${name}`,
    action: 'Evict',
    order: 0,
    podType: 'Default',
    reason: 'default',
    warnings: [],
    terminating: false,
    phase: 'Running',
    claims: [],
    ...o,
  };
}


export class FakeDrain extends CallLog {
  node: NodeFacts;
  pods: PodVerdict[] = [];
  /** Invalid DrainRules that could affect this node (classify's heldBy). */
  heldBy: string[] = [];
  /** ns/name → why: evictions of these pods are refused (a PDB) until removed from the map. */
  readonly refusals = new Map<string, string>();
  /** A pod leaves the node this long after its eviction or deletion (terminating meanwhile). */
  leaveAfterMs = 0;
  /** A controller putting a pod back on the node when one leaves: return the newcomer. */
  recreate?: (left: PodVerdict) => PodVerdict | undefined;
  /** ns/claim of volumes still attached to the node. */
  attached: string[] = [];
  /** The real waitForWave refreshes after 10 s once pods have left; tests may make every wave wait end sooner. */
  waveRefreshMs?: number;
  readonly events: EventInput[] = [];
  /** Targets mode: ns/name → spec.priority (0 when absent), for matching the lanes as classify does. */
  readonly priorities = new Map<string, number>();
  /** The NodeDisruptionBudget a CLI drain (drain/<node>) asks; default: none selects the node. Its calls are logged there. */
  budget = new FakeBudget();
  private rules = 0;
  /** Looks the wave wait returned (the real one classifies when it ends). */
  looksInWaits = 0;

  constructor(name: string, pods: PodVerdict[] = [], node: Partial<NodeFacts> = {}) {
    super();
    this.node = { name, exists: true, unreachable: false, cordoned: false, ...node };
    this.pods = pods;
  }

  /** Runs after the n-th classify read (from 1), before its answer reaches the workflow: a change the read missed. */
  afterClassify?: (n: number) => void;

  /** The node's maintenance-required components, as setMaintenanceRequired last left them. */
  required: string[] = [];

  /**
   * Where each pod's Evacuation stands, as progressEvacuations reports it (NM-5.1–5.5). Default: its
   * first evacuator is active, "moving", for an hour (the wave wait ends when this changes). A pod gone from
   * `pods` is reported left, as the real activity does.
   */
  evacuation: (p: PodVerdict) => EvacuationState = (p) => ({ uid: p.uid, state: 'evacuating', evacuator: p.evacuators![0]!, message: `evacuating by ${p.evacuators![0]}: moving`, untilMs: Date.now() + 3_600_000 });

  /** A DrainRule was created, changed or deleted (ends waitForDrainRuleChange and waitForWave). */
  rulesChanged(heldBy: string[] = this.heldBy): void {
    this.heldBy = heldBy;
    this.rules++;
  }

  protected override context(): string[] {
    return this.pods.map(podKey);
  }

  /** ns/name of every pod an evictPods call was asked to evict, in order. */
  evictionsAsked(): string[] {
    return this.callsOf('evictPods').flatMap((c) => (c.input as EvictInput).pods.map(podKey));
  }

  on(ref: PodRef | string): PodVerdict | undefined {
    return this.pods.find((p) => (typeof ref === 'string' ? podKey(p) === ref : p.uid === ref.uid));
  }

  /** Evicted or deleted: terminating, then gone (and maybe replaced by its controller). */
  private leave(p: PodVerdict): void {
    p.terminating = true;
    const gone = () => {
      this.pods = this.pods.filter((x) => x.uid !== p.uid);
      const back = this.recreate?.(p);
      if (back) this.pods.push(back);
    };
    if (this.leaveAfterMs > 0) setTimeout(gone, this.leaveAfterMs);
    else gone();
  }

  private evictOne(ref: PodRef): EvictResult {
    const p = this.on(ref);
    if (!p) return { ...ref, outcome: 'Gone' };
    if (p.terminating) return { ...ref, outcome: 'AlreadyTerminating' };
    const refusal = this.refusals.get(podKey(p));
    if (refusal !== undefined) return { ...ref, outcome: 'Blocked', reason: refusal };
    this.leave(p);
    return { ...ref, outcome: 'Evicted' };
  }

  /** The activities, logged; pass to WorkflowTestEnv.withWorker. */
  activities() {
    const logged = this.logged.bind(this);
    return {
      ...this.budget.activities(),
      classifyPods: logged('classifyPods', async (input: ClassifyInput): Promise<DrainSnapshot> => {
        const snap = this.look(input);
        this.afterClassify?.(this.callsOf('classifyPods').length);
        return snap;
      }),
      cordonNode: logged('cordonNode', async (_name: string) => {
        const changed = this.node.exists && !this.node.cordoned;
        if (this.node.exists) this.node.cordoned = true;
        return { exists: this.node.exists, changed };
      }),
      uncordonNode: logged('uncordonNode', async (_name: string) => {
        const changed = this.node.exists && this.node.cordoned;
        this.node.cordoned = false;
        return { exists: this.node.exists, changed };
      }),
      evictPods: logged('evictPods', async (input: EvictInput): Promise<EvictResult[]> => input.pods.map((p) => this.evictOne(p))),
      deletePods: logged('deletePods', async (input: DeleteInput): Promise<EvictResult[]> =>
        input.pods.map((ref) => {
          const p = this.on(ref);
          if (!p) return { ...ref, outcome: 'Gone' };
          this.leave(p);
          return { ...ref, outcome: 'Evicted' };
        }),
      ),
      waitForWave: logged('waitForWave', (input: WaveWaitInput) => this.waitForWave(input)),
      waitForVolumeDetach: logged('waitForVolumeDetach', async (input: VolumeWaitInput): Promise<VolumeWaitResult> => {
        const ignored = new Set(input.ignoredClaims);
        const still = () => this.attached.filter((c) => !ignored.has(c));
        const message = () => `Waiting for Node volumes to be detached: ${still().join(', ')}`;
        // As the real one: a later look also ends when what is attached changes from what status shows.
        await until(() => still().length === 0 || this.node.unreachable || (input.shown !== undefined && message() !== input.shown), input.windowMs);
        const left = still();
        if (left.length && this.node.unreachable) return { detached: false, unreachable: true, message: `Waiting for Node volumes to be detached: ${left.join(', ')}`, attachedClaims: left };
        return { detached: left.length === 0, message: left.length ? `Waiting for Node volumes to be detached: ${left.join(', ')}` : 'volumes detached', attachedClaims: left };
      }),
      waitForDrainRuleChange: logged('waitForDrainRuleChange', async (input: { timeoutMs: number; since?: string }): Promise<boolean> => {
        const seen = input.since === undefined ? this.rules : Number(input.since);
        return until(() => this.rules !== seen, input.timeoutMs);
      }),
      // Pre-drain hooks are `node.preDrainHooks`: delete it (or empty it) to release.
      waitForLifecycleHooks: logged('waitForLifecycleHooks', async (input: { nodeName: string; stage: 'pre-drain' | 'pre-terminate'; timeoutMs: number }) => {
        const owners = () => (input.stage === 'pre-drain' ? (this.node.preDrainHooks ?? []) : []);
        const first = owners().join();
        await until(() => owners().join() !== first, input.timeoutMs); // released, or other owners
        return { owners: [...owners()], nodeGone: false };
      }),
      progressEvacuations: logged('progressEvacuations', async (input: EvacuateInput): Promise<EvacuationState[]> =>
        input.pods.map((r) => {
          const p = this.on(r);
          return p ? this.evacuation(p) : { uid: r.uid, state: 'left' as const };
        }),
      ),
      recordFailedEvictions: logged('recordFailedEvictions', async (_input: { pods: Array<{ namespace: string; uid: string; failedEvictions: number }> }) => undefined),
      withdrawEvacuations: logged('withdrawEvacuations', async (input: { requester: string; pods: PodRef[] }) => input.pods.map((p) => ({ uid: p.uid, result: 'deleted' }))),
      setMaintenanceRequired: logged('setMaintenanceRequired', async (input: { nodeName: string; components: string[] }) => {
        this.required = [...input.components];
        return { exists: this.node.exists };
      }),
      recordEvent: logged('recordEvent', async (input: EventInput): Promise<void> => {
        this.events.push(input);
      }),
    };
  }

  /** What classifyPods answers (and the wave wait, when asked to look). */
  private look(input: ClassifyInput): DrainSnapshot {
    const parsed = DrainOptions.safeParse(input.options ?? {});
    const node = { ...this.node };
    if (!parsed.success) return { node, pods: [], errors: parsed.error.issues.map((i) => `drain options ${i.path.join('.')}: ${i.message}`), heldBy: [] };
    const settings = drainSettings(parsed.data);
    if (!node.exists) return { node, pods: [], errors: [], heldBy: [], settings };
    const pods = structuredClone(this.pods).sort((a, b) => (podKey(a) < podKey(b) ? -1 : 1));
    return { node, pods: input.targets ? pods.map((p) => this.judge(p, input.targets!)) : pods, errors: [], heldBy: [...this.heldBy], settings, drainRulesSeen: String(this.rules) };
  }

  /** Targets mode, as classify does it: untargeted pods are marked, targeted DaemonSet and static pods kept. */
  private judge(p: PodVerdict, lanes: Lane[]): PodVerdict {
    const hit = targeted(lanes, { podType: p.podType, priority: this.priorities.get(podKey(p)) ?? 0, labels: {} });
    if (hit && p.podType !== 'Default' && p.action !== 'Skip' && !p.evacuators?.length) return { ...p, action: 'Skip', reason: keptReason(p.podType), order: 0, targeted: true, kept: true };
    return { ...p, targeted: hit };
  }

  /** As activities/drain/wave-wait.ts: ends on the first change the drain must act on. */
  private async waitForWave(input: WaveWaitInput): Promise<WaveWaitResult> {
    const known = new Set([...input.known, ...input.leaving]);
    const seenRules = input.drainRulesSeen === undefined ? this.rules : Number(input.drainRulesSeen);
    const evicted: EvictResult[] = [];
    const refused = new Map(input.refused.map((p) => [p.uid, p]));
    const started = Date.now();
    let end: WaveWaitEnd | undefined;
    // As activities/drain/evacuation-wait.ts: an evacuating pod's Evacuation that calls for another step (or its pod gone).
    const evacuationChanged = () =>
      (input.evacuations ?? []).some((e) => {
        const p = this.pods.find((x) => x.uid === e.name);
        const st = p && this.evacuation(p);
        return !st || st.state !== 'evacuating' || st.evacuator !== e.evacuator;
      });
    const check = (): boolean => {
      let reason = false;
      for (const [uid, ref] of refused) {
        const r = this.evictOne(ref);
        if (r.outcome === 'Blocked') {
          // As the real one (after REASON_REFRESH_MS there; at once here): other words end the wait.
          reason ||= input.reasons?.[uid] !== undefined && input.reasons[uid] !== r.reason;
          continue;
        }
        refused.delete(uid);
        if (r.outcome === 'Evicted') evicted.push(r);
      }
      const remaining = input.leaving.filter((u) => this.on({ uid: u } as PodRef));
      if (evicted.length) end = 'Evicted';
      else if (reason) end = 'Reason';
      else if (!this.node.exists || !this.node.cordoned) end = 'NodeChanged';
      else if (input.nodeLocks !== undefined && JSON.stringify(this.node.locks ?? {}) !== JSON.stringify(input.nodeLocks)) end = 'NodeChanged';
      else if (input.nodeUnreachable === false && this.node.unreachable) end = 'NodeChanged';
      else if (input.nodeClaimedBy !== undefined && this.node.claimedBy !== (input.nodeClaimedBy ?? undefined)) end = 'NodeChanged';
      else if (this.rules !== seenRules) end = 'RulesChanged';
      else if (evacuationChanged()) end = 'EvacuationChanged';
      else if (input.leaving.length && remaining.length === 0) end = 'Left';
      else if (input.completion.some((u) => !this.on({ uid: u } as PodRef) || ['Succeeded', 'Failed'].includes(this.on({ uid: u } as PodRef)!.phase))) end = 'Completed';
      else if (this.pods.some((p) => !known.has(p.uid))) end = 'Arrived';
      else if (this.waveRefreshMs !== undefined && Date.now() - started >= this.waveRefreshMs) end = 'Refresh';
      return end !== undefined;
    };
    let met: boolean;
    try {
      met = await until(check, input.timeoutMs);
    } catch (err) {
      // Cancelled (a signal): as the real one, no further eviction, and an answer with what it did.
      if (!Context.current().cancellationSignal.aborted) throw err;
      return { end: 'Cancelled', remaining: input.leaving.filter((u) => this.on({ uid: u } as PodRef)), evicted, refusals: [] };
    }
    const refusals = [...refused.values()].map((ref) => this.evictOne(ref)).filter((r) => r.outcome === 'Blocked');
    const refusedTimes = Object.fromEntries(refusals.map((r) => [r.uid, 1]));
    const result: WaveWaitResult = { end: met ? end! : 'Timeout', remaining: input.leaving.filter((u) => this.on({ uid: u } as PodRef)), evicted, refusals, refusedTimes };
    if (input.classify) {
      // As the real wait: the next pass's look, counted with the classify reads for afterClassify.
      result.snapshot = this.look(input.classify);
      this.looksInWaits++;
      this.afterClassify?.(this.callsOf('classifyPods').length + this.looksInWaits);
    }
    return result;
  }
}

/** Starts a drain of the fake's node on its own worker; `during` runs while it does. Resolves with its result, or rejects as it fails. */
export async function runDrain(
  t: WorkflowTestEnv,
  fake: FakeDrain,
  { options, during, workflowId = drainWorkflowId(fake.node.name), worker, targets, reportTo, requester }: {
    options?: DrainOptionsInput;
    requester?: { name: string; reason?: string };
    targets?: DrainTargets;
    reportTo?: string;
    during?: (h: WorkflowHandleWithFirstExecutionRunId<typeof drainWorkflow>) => Promise<void>;
    workflowId?: string;
    worker?: WorkerChoice;
  } = {},
): Promise<DrainResult> {
  return t.withWorker(
    fake.activities(),
    async (taskQueue) => {
      const args = { nodeName: fake.node.name, options, ...(targets ? { targets } : {}), ...(reportTo ? { reportTo } : {}), ...(requester ? { requester } : {}) };
      const h = await t.client.workflow.start(drainWorkflow, { taskQueue, workflowId, args: [args] });
      await during?.(h);
      return h.result();
    },
    { workflowIds: [workflowId], ...worker },
  );
}

/** The drain's status once `pred` holds (polled every 50 ms, at most 15 s). */
export function statusWhen(h: WorkflowHandle<typeof drainWorkflow>, what: string, pred: (s: DrainStatus) => boolean): Promise<DrainStatus> {
  return waitFor(what, async () => {
    const s = await h.query(drainStatusQuery);
    return pred(s) ? s : undefined;
  }, { timeoutMs: WAIT_MS, intervalMs: 50 });
}

/** Resolves once `pred` holds for the fake (polled every 20 ms, at most WAIT_MS). */
export function fakeWhen(what: string, pred: () => boolean): Promise<true> {
  return waitFor(what, async () => pred() || undefined, { timeoutMs: WAIT_MS, intervalMs: 20 });
}

/** A workflow that nobody runs: it stays open and its history keeps every signal sent to it. */
export async function receiver(client: Client, id: string): Promise<{ id: string; reports(): Promise<DrainReport[]>; close(): Promise<void> }> {
  await client.workflow.start('reportReceiver', { taskQueue: `nobody-${id}`, workflowId: id, args: [] });
  return {
    id,
    async reports() {
      const h = await client.workflow.getHandle(id).fetchHistory();
      return h.events!.flatMap((e) => {
        const s = e.workflowExecutionSignaledEventAttributes;
        if (!s || s.signalName !== 'drainProgress') return [];
        return [defaultPayloadConverter.fromPayload<DrainReport>(s.input!.payloads![0]!)];
      });
    },
    close: () => client.workflow.getHandle(id).terminate('test done').then(() => undefined),
  };
}

/** The first report matching `pred` (polled every 100 ms, at most 15 s). */
export const reportWhen = (r: { reports(): Promise<DrainReport[]> }, what: string, pred: (x: DrainReport) => boolean) =>
  waitFor(what, async () => (await r.reports()).find(pred), { timeoutMs: WAIT_MS, intervalMs: 100 });
