// One CycleNodeRequest, reconciled from its cached state: level-based and idempotent, so a replayed
// or duplicate event (or a restarted bridge) finds everything done and writes nothing.
//
//   deleted (deletionTimestamp) → cancel the workflow, mirror it until it is closed, drop the finalizer
//   no workflow yet             → validate the spec: invalid → status Failed/InvalidSpec + Warning Event;
//                                 valid → finalizer, start the workflow (one ID per object), record it
//   workflow                    → mirror its state into status and CycleNodeStatus objects
import { CycleNodeRequestSpec, CycleSettings } from '../../api/cycle-node-request.js';
import type { EventInput } from '../../activities/events.js';
import { apiStatus } from '../../activities/kube.js';
import { webUiLink } from '../../worker/config.js';
import type { NodeCycleStatus } from '../../workflows/cycle/types.js';
import { cycleWorkflowId } from '../../workflows/ids.js';
import { objectKey, type ObjectCache } from '../controller/cache.js';
import { cycleNodeStatusName, FINALIZER, REQUEST_LABEL, requestLabelValue } from './names.js';
import { CNS_API_VERSION, isGoneOrTerminating, ownerReference, type CycleNodeRequestObject, type CycleNodeStatusObject, type CycleObjects } from './objects.js';
import {
  closedNodes,
  closedState,
  invalidSpecMessage,
  invalidSpecStatus,
  mayCreateNodeStatuses,
  mergePatchOf,
  nodeStatus,
  requestStatus,
  stateFromStatus,
  statusChanged,
  statusEvents,
} from './status.js';
import type { CycleWorkflows } from './temporal.js';
import type { Tracked, WorkflowTrackers } from './tracker.js';

export interface BridgeStats {
  /** Start requests sent (a request for an ID already taken attaches to it: still one execution). */
  workflowsStarted: number;
  statusWrites: number;
  finalizersAdded: number;
  finalizersRemoved: number;
  cancels: number;
  nodeStatusesCreated: number;
  nodeStatusWrites: number;
  events: number;
}

export const emptyStats = (): BridgeStats => ({
  workflowsStarted: 0,
  statusWrites: 0,
  finalizersAdded: 0,
  finalizersRemoved: 0,
  cancels: 0,
  nodeStatusesCreated: 0,
  nodeStatusWrites: 0,
  events: 0,
});

export interface ReconcilerDeps {
  requests: ObjectCache<CycleNodeRequestObject>;
  statuses: ObjectCache<CycleNodeStatusObject>;
  objects: CycleObjects;
  workflows: CycleWorkflows;
  trackers: WorkflowTrackers;
  recordEvent: (e: EventInput) => Promise<void>;
  /** Checked before every write: only the leader writes. */
  isLeader: () => boolean;
  stats: BridgeStats;
  log: (msg: string) => void;
  now?: () => Date;
}

export class NotLeaderError extends Error {
  constructor() {
    super('not the leader: not writing');
    this.name = 'NotLeaderError';
  }
}

const REQUEST_API_VERSION = 'slipway.dev/v1alpha1';

export class Reconciler {
  private readonly now: () => Date;

  constructor(private readonly d: ReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
  }

  async reconcile(key: string): Promise<void> {
    const obj = this.d.requests.get(key);
    if (!obj) {
      this.d.trackers.untrackKey(key);
      return;
    }
    this.d.trackers.untrackKey(key, obj.metadata.uid); // a recreated object: forget the old one's workflow
    if (obj.metadata.deletionTimestamp) return this.finalize(obj);

    const workflowId = cycleWorkflowId(obj.metadata);
    let t = this.d.trackers.get(obj.metadata.uid);
    if (!t && obj.status?.workflowId === workflowId) {
      t = this.d.trackers.track({ key, uid: obj.metadata.uid, workflowId, runId: obj.status.runId, generation: obj.status.observedGeneration });
    }
    if (!t) {
      const parsed = CycleNodeRequestSpec.safeParse(obj.spec);
      if (!parsed.success) return this.reportInvalid(obj, invalidSpecMessage(parsed.error));
      const withFinalizer = await this.ensureFinalizer(obj);
      if (!withFinalizer) return;
      this.mustLead();
      const started = await this.d.workflows.start(
        workflowId,
        { namespace: obj.metadata.namespace, name: obj.metadata.name, uid: obj.metadata.uid, generation: obj.metadata.generation },
        parsed.data,
      );
      this.d.stats.workflowsStarted++;
      this.d.log(`${key}: ${started.existing ? 'workflow exists' : 'started workflow'} ${workflowId} run ${started.runId} — ${webUiLink(workflowId)}`);
      t = this.d.trackers.track({ key, uid: obj.metadata.uid, workflowId, runId: started.runId || undefined, generation: obj.metadata.generation });
      return this.mirror(withFinalizer, t);
    }
    const current = obj.metadata.finalizers?.includes(FINALIZER) ? obj : await this.ensureFinalizer(obj);
    if (!current) return;
    await this.applySpecChange(current, t);
    await this.mirror(current, t);
  }

  /**
   * A new generation of a running request's spec goes to its workflow as an update. The workflow
   * takes a concurrency change (for its next batch) and refuses anything else; the CRD's CEL rule
   * refuses those at admission already, so a refusal here means the rule was bypassed. Either way
   * the generation counts as observed, with an Event saying what happened.
   */
  private async applySpecChange(obj: CycleNodeRequestObject, t: Tracked): Promise<void> {
    const generation = obj.metadata.generation;
    if (generation === undefined || t.generation === undefined || generation <= t.generation || t.closed) return;
    const parsed = CycleNodeRequestSpec.safeParse(obj.spec);
    this.mustLead();
    const outcome = parsed.success
      ? await this.d.workflows.changeSpec(t.workflowId, parsed.data, generation)
      : { applied: false as const, reason: invalidSpecMessage(parsed.error) };
    t.generation = generation;
    if (outcome.applied) {
      await this.event(obj, 'Normal', 'SpecChanged', `generation ${generation} applied: concurrency ${outcome.concurrency} from the next batch`, `SpecChanged/${t.workflowId}/${generation}`);
    } else {
      await this.event(obj, 'Warning', 'SpecChangeRefused', `generation ${generation} not applied: ${outcome.reason}`, `SpecChangeRefused/${t.workflowId}/${generation}`);
    }
    this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: spec generation ${generation} ${outcome.applied ? `applied (concurrency ${outcome.concurrency})` : `refused: ${outcome.reason}`}`);
  }

  // ---- status -----------------------------------------------------------------------------------

  /**
   * Writes the workflow's state into status (when it changed), with the Events the change calls
   * for, and brings the CycleNodeStatus objects up to date (creating missing ones only while the
   * request lives). Writes whose target is going away are skipped, never retried.
   */
  private async mirror(obj: CycleNodeRequestObject, t: Tracked): Promise<void> {
    const prevState = obj.status?.workflowId === t.workflowId ? stateFromStatus(obj.status) : undefined;
    const state = t.closed ? closedState(t.closed, t.state ?? prevState, t.workflowId) : t.state;
    const taskFailure = t.closed ? undefined : t.taskFailure;
    const desired = requestStatus({ prev: obj.status, workflow: { workflowId: t.workflowId, runId: t.runId }, state, observedGeneration: t.generation, taskFailure, now: this.now() });
    if (statusChanged(obj.status, desired)) {
      for (const ev of statusEvents(obj.status, desired, t.workflowId, taskFailure)) await this.event(obj, ev.type, ev.reason, ev.message, ev.dedup);
      if (!(await this.writeStatus(obj, desired))) return;
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: status ${desired.phase} (${desired.nodesCycled ?? 0}/${desired.nodesTotal ?? 0}) ${desired.message ?? ''}`);
    }
    // Per-node objects only from the workflow's own word: a query answer, or its result.
    const nodes = t.closed ? closedNodes(t.closed) : t.state?.nodes;
    if (nodes) await this.syncNodeStatuses(obj, nodes, mayCreateNodeStatuses(obj, t.workflowId));
  }

  /** Merge-patches status; false when the object is gone (nothing to write to, nothing to retry). */
  private async writeStatus(obj: CycleNodeRequestObject, desired: object): Promise<boolean> {
    this.mustLead();
    try {
      const updated = await this.d.objects.patchRequestStatus(obj, mergePatchOf(obj.status, desired));
      this.d.stats.statusWrites++;
      this.d.requests.put(updated);
      return true;
    } catch (err) {
      if (!isGoneOrTerminating(err)) throw err;
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: status not written, the object is gone`);
      return false;
    }
  }

  private async reportInvalid(obj: CycleNodeRequestObject, message: string): Promise<void> {
    const desired = invalidSpecStatus(obj.status, message, obj.metadata.generation, this.now());
    if (!statusChanged(obj.status, desired)) return;
    await this.event(obj, 'Warning', 'InvalidSpec', message, `InvalidSpec/${obj.metadata.generation}/${message}`);
    await this.writeStatus(obj, desired);
    this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: ${message}`);
  }

  /** Records an Event on the request; skipped (not retried) when its namespace is terminating or gone. */
  private async event(obj: CycleNodeRequestObject, type: 'Normal' | 'Warning', reason: string, message: string, dedup: string): Promise<void> {
    this.mustLead();
    try {
      await this.d.recordEvent({
        involved: { kind: 'CycleNodeRequest', apiVersion: REQUEST_API_VERSION, namespace: obj.metadata.namespace, name: obj.metadata.name, uid: obj.metadata.uid },
        type,
        reason,
        message,
        dedupKey: `${obj.metadata.uid}/${dedup}`,
      });
      this.d.stats.events++;
    } catch (err) {
      if (!isGoneOrTerminating(err)) throw err;
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: Event ${reason} not recorded: namespace terminating or gone`);
    }
  }

  // ---- CycleNodeStatus --------------------------------------------------------------------------

  private async syncNodeStatuses(req: CycleNodeRequestObject, nodes: NodeCycleStatus[], mayCreate: boolean): Promise<void> {
    const { namespace, name: requestName, uid } = req.metadata;
    const parsedSettings = CycleSettings.safeParse((req.spec as { cycleSettings?: unknown } | undefined)?.cycleSettings ?? {});
    const cycleSettings = parsedSettings.success ? parsedSettings.data : CycleSettings.parse({});
    for (const n of nodes) {
      const name = cycleNodeStatusName(requestName, n.nodeName);
      let cur = this.d.statuses.get(objectKey(namespace, name));
      if (cur && !cur.metadata.ownerReferences?.some((o) => o.uid === uid)) continue; // a previous request's: garbage collection removes it
      if (!cur) {
        if (!mayCreate) continue; // finished or deleted: what is gone stays gone
        this.mustLead();
        let created: CycleNodeStatusObject | undefined;
        try {
          created = await this.d.objects.createNodeStatus({
            apiVersion: CNS_API_VERSION,
            kind: 'CycleNodeStatus',
            metadata: { name, namespace, labels: { [REQUEST_LABEL]: requestLabelValue(requestName) }, ownerReferences: [ownerReference(req)] },
            spec: { nodeName: n.nodeName, requestName, cycleSettings },
          });
        } catch (err) {
          if (!isGoneOrTerminating(err)) throw err;
          this.d.log(`${namespace}/${requestName}: CycleNodeStatus ${name} not created: namespace terminating or gone`);
          return;
        }
        if (!created) continue; // exists already; its watch event brings this request back here
        this.d.statuses.put(created);
        this.d.stats.nodeStatusesCreated++;
        this.d.log(`${namespace}/${requestName}: created CycleNodeStatus ${name}`);
        cur = created;
      }
      const desired = nodeStatus(n);
      if (!statusChanged(cur.status, desired)) continue;
      this.mustLead();
      let updated: CycleNodeStatusObject;
      try {
        updated = await this.d.objects.patchNodeStatus(namespace, name, mergePatchOf(cur.status, desired));
      } catch (err) {
        if (!isGoneOrTerminating(err)) throw err;
        continue; // deleted meanwhile (its watch event removes it from the cache)
      }
      this.d.statuses.put(updated);
      this.d.stats.nodeStatusWrites++;
      this.d.log(`${namespace}/${name}: node ${n.nodeName} ${n.phase}${n.message ? ` ${n.message}` : ''}`);
    }
  }

  // ---- finalizer and deletion -------------------------------------------------------------------

  /** Adds the finalizer (if missing); the object as stored after, or undefined when it is gone or being deleted. */
  private async ensureFinalizer(obj: CycleNodeRequestObject): Promise<CycleNodeRequestObject | undefined> {
    const r = await this.updateFinalizers(obj, (f) => (f.includes(FINALIZER) ? undefined : [...f, FINALIZER]), true);
    if (r.changed) {
      this.d.stats.finalizersAdded++;
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: added finalizer ${FINALIZER}`);
    }
    return r.obj && !r.obj.metadata.deletionTimestamp ? r.obj : undefined;
  }

  /**
   * Applies `change` to the finalizers with the resourceVersion read (409: read again, retry).
   * `change` returns undefined for "nothing to do".
   */
  private async updateFinalizers(
    obj: CycleNodeRequestObject,
    change: (f: string[]) => string[] | undefined,
    skipIfDeleting: boolean,
  ): Promise<{ obj?: CycleNodeRequestObject; changed: boolean }> {
    let cur: CycleNodeRequestObject | undefined = obj;
    for (let attempt = 0; ; attempt++) {
      if (!cur || cur.metadata.uid !== obj.metadata.uid) return { changed: false };
      if (skipIfDeleting && cur.metadata.deletionTimestamp) return { obj: cur, changed: false };
      const next = change(cur.metadata.finalizers ?? []);
      if (!next) return { obj: cur, changed: false };
      this.mustLead();
      try {
        const updated = await this.d.objects.setFinalizers(cur, next);
        this.d.requests.put(updated);
        return { obj: updated, changed: true };
      } catch (err) {
        const code = apiStatus(err);
        if (code === 404) return { changed: false };
        if (code !== 409 || attempt >= 3) throw err;
        cur = await this.d.objects.getRequest(obj.metadata.namespace, obj.metadata.name);
        if (cur) this.d.requests.put(cur);
      }
    }
  }

  /** Deletion: cancel the workflow, keep mirroring its compensations, and let the object go once it is closed. */
  private async finalize(obj: CycleNodeRequestObject): Promise<void> {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    if (!obj.metadata.finalizers?.includes(FINALIZER)) {
      this.d.trackers.untrack(obj.metadata.uid);
      return;
    }
    const workflowId = cycleWorkflowId(obj.metadata);
    let t = this.d.trackers.get(obj.metadata.uid);
    if (!t) {
      const d = await this.d.workflows.describe(workflowId);
      if (d) t = this.d.trackers.track({ key, uid: obj.metadata.uid, workflowId, runId: d.runId, generation: obj.status?.observedGeneration });
      else this.d.log(`${key}: deleted; no workflow was started`);
    }
    if (t && !t.closed) {
      if (!t.cancelRequested) {
        this.mustLead();
        try {
          await this.d.workflows.cancel(workflowId);
          this.d.stats.cancels++;
          this.d.log(`${key}: deleted; cancelled workflow ${workflowId}, waiting for it to close`);
        } catch (err) {
          const d = await this.d.workflows.describe(workflowId);
          if (d?.statusName === 'RUNNING') throw err; // else it closed meanwhile: the close watch reports it
        }
        t.cancelRequested = true;
      }
      await this.mirror(obj, t);
      return; // the close watch brings the object back here
    }
    // The workflow is closed: its last state is worth a try, but nothing may keep the object (and
    // so its namespace) from going.
    if (t) {
      await this.mirror(obj, t).catch((err: unknown) => {
        if (err instanceof NotLeaderError) throw err;
        this.d.log(`${key}: final status not mirrored (${err instanceof Error ? err.message : String(err)}); removing the finalizer anyway`);
      });
    }
    const r = await this.updateFinalizers(obj, (f) => (f.includes(FINALIZER) ? f.filter((x) => x !== FINALIZER) : undefined), false);
    if (r.changed) {
      this.d.stats.finalizersRemoved++;
      this.d.log(`${key}: removed finalizer ${FINALIZER}${t ? ` (workflow ${t.closed?.statusName})` : ''}`);
    }
    this.d.trackers.untrack(obj.metadata.uid);
  }

  private mustLead(): void {
    if (!this.d.isLeader()) throw new NotLeaderError();
  }
}
