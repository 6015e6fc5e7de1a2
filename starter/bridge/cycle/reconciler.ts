// One CycleNodeRequest, reconciled from its cached state: level-based and idempotent, so a replayed
// or duplicate event (or a restarted bridge) finds everything done and writes nothing. What to write
// (finalizers, status, Events, CycleNodeStatus objects) is computed first by desired.ts (pure); this
// file does the I/O: workflow start, cancel and spec updates, then the writes.
//
//   deleted (deletionTimestamp) → cancel the workflow, mirror it until it is closed, drop the finalizer
//   no workflow yet             → validate the spec: invalid → status Failed/InvalidSpec + Warning Event;
//                                 valid → finalizer, start the workflow (one ID per object), record it
//   workflow                    → mirror its state into status and CycleNodeStatus objects
import { CYCLE_NODE_REQUEST, CycleNodeRequestSpec } from '../../../api/cycle-node-request.js';
import type { EventInput } from '../../../activities/events.js';
import { apiStatus } from '../../../kube/client.js';
import { webUiLink } from '../../../shared/temporal.js';
import { cycleWorkflowId } from '../../../workflows/ids.js';
import { objectKey, type ObjectCache } from '../../../kube/controller/cache.js';
import { desired, type Desired, type NodeStatusWrite } from './desired.js';
import { CYCLE_FINALIZER } from '../../../api/cycle-node-request.js';
import { API_VERSION } from '../../../api/names.js';
import type { CycleNodeRequestObject, CycleNodeStatusObject, CycleObjects } from './objects.js';
import type { CycleWorkflows } from './temporal.js';
import { eventWriter, NotLeaderError, type BridgeStats } from '../kit.js';
import { isGoneOrTerminating } from '../kube-objects.js';
import type { Tracked, WorkflowTrackers } from '../tracker.js';
import { closedGeneration, invalidSpecMessage } from '../workflow-status.js';
import { failpoint } from '../../../shared/failpoint.js';
import { objectFields, type Log } from '../../../shared/log.js';

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
  log: Log;
  now?: () => Date;
  /** Requests in other namespaces are refused with an Event (desired.ts namespaceRefusal); undefined: all. */
  allowedNamespaces?: readonly string[];
}


export class Reconciler {
  private readonly now: () => Date;
  private readonly event: ReturnType<typeof eventWriter>;

  constructor(private readonly d: ReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.event = eventWriter(CYCLE_NODE_REQUEST.kind, API_VERSION, d);
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
      const before = this.desired(obj, undefined);
      if (before.invalidSpec) return this.apply(obj, before);
      const withFinalizer = await this.ensureFinalizer(obj, undefined);
      if (!withFinalizer) return;
      failpoint('bridge.cnr.after-finalizer');
      this.mustLead();
      const started = await this.d.workflows.start(
        workflowId,
        { namespace: obj.metadata.namespace, name: obj.metadata.name, uid: obj.metadata.uid, generation: obj.metadata.generation },
        CycleNodeRequestSpec.parse(obj.spec),
      );
      this.d.stats.workflowsStarted++;
      this.d.log(`${key}: ${started.existing ? 'workflow exists' : 'started workflow'} ${workflowId} run ${started.runId} — ${webUiLink(workflowId)}`, { ...objectFields('CycleNodeRequest', key), workflowId });
      t = this.d.trackers.track({ key, uid: obj.metadata.uid, workflowId, runId: started.runId || undefined, generation: obj.metadata.generation });
      failpoint('bridge.cnr.after-start');
      return this.apply(withFinalizer, this.desired(withFinalizer, t));
    }
    const current = await this.ensureFinalizer(obj, t);
    if (!current) return;
    await this.applySpecChange(current, t);
    await this.apply(current, this.desired(current, t));
  }

  private desired(obj: CycleNodeRequestObject, workflow: Tracked | undefined): Desired {
    return desired({ obj, workflow, nodeStatus: (k) => this.d.statuses.get(k), now: this.now(), allowedNamespaces: this.d.allowedNamespaces });
  }

  /**
   * A new generation of a running request's spec goes to its workflow as an update. The workflow
   * takes a concurrency change (for its next batch) and refuses anything else; the CRD's CEL rule
   * refuses those at admission already, so a refusal here means the rule was bypassed. Either way
   * the generation counts as observed, with an Event saying what happened.
   */
  private async applySpecChange(obj: CycleNodeRequestObject, t: Tracked): Promise<void> {
    const generation = obj.metadata.generation;
    if (t.closed) return this.observeClosed(obj, t);
    if (generation === undefined || t.generation === undefined || generation <= t.generation) return;
    const parsed = CycleNodeRequestSpec.safeParse(obj.spec);
    this.mustLead();
    const outcome = parsed.success
      ? await this.d.workflows.changeSpec(t.workflowId, parsed.data, generation)
      : { applied: false as const, reason: invalidSpecMessage(parsed.error) };
    if ('closed' in outcome && outcome.closed) {
      // It finished first: its close report settles the generation (observeClosed).
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: spec generation ${generation} not sent, workflow ${t.workflowId} has closed`, { ...objectFields('CycleNodeRequest', objectKey(obj.metadata.namespace, obj.metadata.name)), workflowId: t.workflowId });
      if (t.closed) await this.observeClosed(obj, t);
      return;
    }
    t.generation = generation;
    if (outcome.applied) {
      await this.event(obj, { type: 'Normal', reason: 'SpecChanged', message: `generation ${generation} applied: concurrency ${outcome.concurrency} from the next batch`, dedup: `SpecChanged/${t.workflowId}/${generation}` });
    } else {
      await this.event(obj, { type: 'Warning', reason: 'SpecChangeRefused', message: `generation ${generation} not applied: ${outcome.reason}`, dedup: `SpecChangeRefused/${t.workflowId}/${generation}` });
    }
    this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: spec generation ${generation} ${outcome.applied ? `applied (concurrency ${outcome.concurrency})` : `refused: ${outcome.reason}`}`, objectFields('CycleNodeRequest', objectKey(obj.metadata.namespace, obj.metadata.name)));
  }

  /** A finished request takes no edit: the generation counts as observed all the same, with a Warning saying it was not applied. */
  private async observeClosed(obj: CycleNodeRequestObject, t: Tracked): Promise<void> {
    const seen = closedGeneration(obj.metadata.generation, t.generation);
    if (!seen) return;
    t.generation = seen.generation;
    const why = `workflow ${t.workflowId} has ${t.closed!.statusName.toLowerCase().replace(/_/g, ' ')}`;
    await this.event(obj, { type: 'Warning', reason: 'SpecChangeRefused', message: `generation ${seen.generation} not applied: ${why}`, dedup: `SpecChangeRefused/${t.workflowId}/${seen.generation}` });
    this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: spec generation ${seen.generation} not applied: ${why}`, objectFields('CycleNodeRequest', objectKey(obj.metadata.namespace, obj.metadata.name)));
  }

  // ---- writes ------------------------------------------------------------------------------------

  /**
   * Writes what `desired` computed for the status: its Events, then the status, then the
   * CycleNodeStatus objects. Writes whose target is going away are skipped, never retried.
   */
  private async apply(obj: CycleNodeRequestObject, want: Desired): Promise<void> {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    if (want.status) {
      for (const ev of want.events) await this.event(obj, ev);
      if (!(await this.writeStatus(obj, want.status.patch))) return;
      failpoint('bridge.cnr.after-status');
      const s = want.status.next;
      this.d.log(want.invalidSpec ? `${key}: ${want.invalidSpec}` : `${key}: status ${s.phase} (${s.nodesCycled ?? 0}/${s.nodesTotal ?? 0}) ${s.message ?? ''}`, objectFields('CycleNodeRequest', key));
    }
    for (const w of want.nodeStatuses) if (!(await this.writeNodeStatus(obj, w))) return;
  }

  /** Merge-patches status; false when the object is gone (nothing to write to, nothing to retry). */
  private async writeStatus(obj: CycleNodeRequestObject, patch: Record<string, unknown>): Promise<boolean> {
    this.mustLead();
    try {
      const updated = await this.d.objects.patchRequestStatus(obj, patch);
      this.d.stats.statusWrites++;
      this.d.requests.put(updated);
      return true;
    } catch (err) {
      if (!isGoneOrTerminating(err)) throw err;
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: status not written, the object is gone`, objectFields('CycleNodeRequest', objectKey(obj.metadata.namespace, obj.metadata.name)));
      return false;
    }
  }

  /** Creates (if asked) and patches one CycleNodeStatus; false when its namespace is going away (stop writing there). */
  private async writeNodeStatus(req: CycleNodeRequestObject, w: NodeStatusWrite): Promise<boolean> {
    const { namespace, name: requestName } = req.metadata;
    if (w.create) {
      this.mustLead();
      let created: CycleNodeStatusObject | undefined;
      try {
        created = await this.d.objects.createNodeStatus(w.create);
      } catch (err) {
        if (!isGoneOrTerminating(err)) throw err;
        this.d.log(`${namespace}/${requestName}: CycleNodeStatus ${w.name} not created: namespace terminating or gone`, objectFields('CycleNodeRequest', `${namespace}/${requestName}`));
        return false;
      }
      if (!created) return true; // exists already; its watch event brings this request back here
      this.d.statuses.put(created);
      this.d.stats.nodeStatusesCreated++;
      failpoint('bridge.cnr.after-node-status');
      this.d.log(`${namespace}/${requestName}: created CycleNodeStatus ${w.name}`, objectFields('CycleNodeRequest', `${namespace}/${requestName}`));
    }
    if (!w.patch) return true;
    this.mustLead();
    let updated: CycleNodeStatusObject;
    try {
      updated = await this.d.objects.patchNodeStatus(namespace, w.name, w.patch);
    } catch (err) {
      if (!isGoneOrTerminating(err)) throw err;
      return true; // deleted meanwhile (its watch event removes it from the cache)
    }
    this.d.statuses.put(updated);
    this.d.stats.nodeStatusWrites++;
    this.d.log(`${namespace}/${w.name}: node ${w.node.nodeName} ${w.node.phase}${w.node.message ? ` ${w.node.message}` : ''}`, { kind: 'CycleNodeStatus', namespace, name: w.name, node: w.node.nodeName });
    return true;
  }

  // ---- finalizer and deletion -------------------------------------------------------------------

  /** Adds the finalizer (if missing); the object as stored after, or undefined when it is gone or being deleted. */
  private async ensureFinalizer(obj: CycleNodeRequestObject, t: Tracked | undefined): Promise<CycleNodeRequestObject | undefined> {
    const r = await this.updateFinalizers(obj, t, true);
    if (r.changed) {
      this.d.stats.finalizersAdded++;
      this.d.log(`${objectKey(obj.metadata.namespace, obj.metadata.name)}: added finalizer ${CYCLE_FINALIZER}`, objectFields('CycleNodeRequest', objectKey(obj.metadata.namespace, obj.metadata.name)));
    }
    return r.obj && !r.obj.metadata.deletionTimestamp ? r.obj : undefined;
  }

  /**
   * Sets the finalizers `desired` asks for, with the resourceVersion read (409: read again,
   * compute again, retry).
   */
  private async updateFinalizers(
    obj: CycleNodeRequestObject,
    t: Tracked | undefined,
    skipIfDeleting: boolean,
  ): Promise<{ obj?: CycleNodeRequestObject; changed: boolean }> {
    let cur: CycleNodeRequestObject | undefined = obj;
    for (let attempt = 0; ; attempt++) {
      if (!cur || cur.metadata.uid !== obj.metadata.uid) return { changed: false };
      if (skipIfDeleting && cur.metadata.deletionTimestamp) return { obj: cur, changed: false };
      const next = this.desired(cur, t).finalizers;
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
    if (!obj.metadata.finalizers?.includes(CYCLE_FINALIZER)) {
      this.d.trackers.untrack(obj.metadata.uid);
      return;
    }
    const workflowId = cycleWorkflowId(obj.metadata);
    let t = this.d.trackers.get(obj.metadata.uid);
    if (!t) {
      const d = await this.d.workflows.describe(workflowId);
      if (d) t = this.d.trackers.track({ key, uid: obj.metadata.uid, workflowId, runId: d.runId, generation: obj.status?.observedGeneration });
      else this.d.log(`${key}: deleted; no workflow was started`, objectFields('CycleNodeRequest', key));
    }
    if (t && !t.closed) {
      if (!t.cancelRequested) {
        this.mustLead();
        try {
          await this.d.workflows.cancel(workflowId);
          this.d.stats.cancels++;
          this.d.log(`${key}: deleted; cancelled workflow ${workflowId}, waiting for it to close`, { ...objectFields('CycleNodeRequest', key), workflowId });
          failpoint('bridge.cnr.after-cancel');
        } catch (err) {
          const d = await this.d.workflows.describe(workflowId);
          if (d?.statusName === 'RUNNING') throw err; // else it closed meanwhile: the close watch reports it
        }
        t.cancelRequested = true;
      }
      await this.apply(obj, this.desired(obj, t));
      return; // the close watch brings the object back here
    }
    // The workflow is closed: its last state is worth a try, but nothing may keep the object (and
    // so its namespace) from going.
    if (t) {
      await this.apply(obj, this.desired(obj, t)).catch((err: unknown) => {
        if (err instanceof NotLeaderError) throw err;
        this.d.log(`${key}: final status not mirrored (${err instanceof Error ? err.message : String(err)}); removing the finalizer anyway`, objectFields('CycleNodeRequest', key));
      });
    }
    failpoint('bridge.cnr.before-finalizer-removal');
    const r = await this.updateFinalizers(obj, t, false);
    if (r.changed) {
      this.d.stats.finalizersRemoved++;
      this.d.log(`${key}: removed finalizer ${CYCLE_FINALIZER}${t ? ` (workflow ${t.closed?.statusName})` : ''}`, objectFields('CycleNodeRequest', key));
    }
    this.d.trackers.untrack(obj.metadata.uid);
  }

  private mustLead(): void {
    if (!this.d.isLeader()) throw new NotLeaderError();
  }
}
