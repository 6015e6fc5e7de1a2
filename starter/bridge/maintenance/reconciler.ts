// One NodeMaintenance, reconciled from its cached state: level-based and idempotent like the
// CycleNodeRequest reconciler (../cycle/reconciler.ts), on the same controller and trackers. What to write is
// computed by desired.ts (pure); this file does the I/O.
//
//   gone                      → an Idle maintenance was deleted: its workflow is told and ends (NM-2.11)
//   deleting                  → Complete first, then the finalizer goes (NM-2.12, NM-2.13)
//   no workflow yet           → invalid spec: Ready=False InvalidSpec + Event (NM-4.7); valid: start
//                               nm/<name>/<uid> (even while Idle; the workflow adds the finalizer itself)
//   workflow                  → new generations and the allow-all-nodes annotation go as `specChanged`;
//                               `maintenanceStatus` is mirrored into status with its Events
import { MAINTENANCE_FINALIZER, NODE_MAINTENANCE, NodeMaintenanceSpec } from '../../../api/node-maintenance.js';
import { failpoint } from '../../../shared/failpoint.js';
import type { EventInput } from '../../../activities/events.js';
import { apiStatus } from '../../../kube/client.js';
import { webUiLink } from '../../../shared/temporal.js';
import { maintenanceWorkflowId } from '../../../workflows/ids.js';
import type { MaintenanceStatus } from '../../../workflows/maintenance/types.js';
import type { ObjectCache } from '../../../kube/controller/cache.js';
import type { NodeSelector } from '../../../api/node-maintenance.js';
import type { PreviewFeed } from './preview-feed.js';
import { allowsAllNodes, desiredMaintenance, orphanedMaintenances, specChangeToSend, type MaintenanceDesired } from './desired.js';
import { API_VERSION } from '../../../api/names.js';
import { type MaintenanceObjects, type NodeMaintenanceObject } from './objects.js';
import type { MaintenanceWorkflows } from './temporal.js';
import { closedMaintenance } from './status.js';
import { eventWriter, NotLeaderError, type BridgeStats } from '../kit.js';
import type { Tracked, WorkflowTrackers } from '../tracker.js';
import { closedGeneration, invalidSpecMessage } from '../workflow-status.js';
import { objectFields, type Log } from '../../../shared/log.js';

export interface MaintenanceReconcilerDeps {
  maintenances: ObjectCache<NodeMaintenanceObject>;
  objects: MaintenanceObjects;
  workflows: MaintenanceWorkflows;
  trackers: WorkflowTrackers<MaintenanceStatus>;
  recordEvent: (e: EventInput) => Promise<void>;
  /** The Idle previews' feed of changes (preview-feed.ts): told what each Idle maintenance's preview read. */
  previewFeed?: Pick<PreviewFeed, 'observe'>;
  /** Checked before every write: only the leader writes. */
  isLeader: () => boolean;
  stats: BridgeStats;
  log: Log;
  now?: () => Date;
}

type T = Tracked<MaintenanceStatus>;

export class MaintenanceReconciler {
  private readonly now: () => Date;
  private readonly event: ReturnType<typeof eventWriter>;
  /** Per object key: the uid and the allow-all-nodes value its workflow was last sent. */
  private readonly sentAllow = new Map<string, { uid: string; allow: boolean }>();
  /** Workflows told by sweep() that their object is gone (until they no longer run). */
  private readonly toldOrphans = new Set<string>();

  constructor(private readonly d: MaintenanceReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.event = eventWriter(NODE_MAINTENANCE.kind, API_VERSION, d);
  }

  async reconcile(key: string): Promise<void> {
    const obj = this.d.maintenances.get(key);
    this.feedPreview(key, obj);
    if (!obj) return this.gone(key);
    for (const t of this.d.trackers.byKey(key)) if (t.uid !== obj.metadata.uid) await this.gone(key, t.uid); // recreated: the old one is gone
    const { uid } = obj.metadata;
    const workflowId = maintenanceWorkflowId(obj.metadata);
    let t = this.d.trackers.get(uid);
    if (!t && obj.status?.workflowId === workflowId) {
      t = this.d.trackers.track({ key, uid, workflowId, runId: obj.status.runId, generation: obj.status.observedGeneration });
    }
    if (obj.metadata.deletionTimestamp) return this.deleting(obj, t);
    if (!t) {
      const before = this.desired(obj, undefined);
      if (before.invalidSpec) return this.apply(obj, before);
      this.mustLead();
      const allow = allowsAllNodes(obj);
      const started = await this.d.workflows.start({
        name: obj.metadata.name,
        uid,
        createdAt: obj.metadata.creationTimestamp ? new Date(obj.metadata.creationTimestamp).toISOString() : this.now().toISOString(),
        spec: obj.spec as MaintenanceStartSpec,
        generation: obj.metadata.generation,
        allowAllNodes: allow,
      });
      this.d.stats.workflowsStarted++;
      if (!started.existing) failpoint('bridge.nm.after-start');
      this.d.log(`${key}: ${started.existing ? 'workflow exists' : 'started workflow'} ${workflowId} run ${started.runId} — ${webUiLink(workflowId)}`, { ...objectFields('NodeMaintenance', key), workflowId });
      this.sentAllow.set(key, { uid, allow });
      t = this.d.trackers.track({ key, uid, workflowId, runId: started.runId || undefined, generation: obj.metadata.generation });
    } else {
      await this.applySpecChange(obj, t);
    }
    await this.apply(obj, this.desired(obj, t));
  }

  /** An Idle maintenance with a preview is watched by the feed, from its workflow's latest answer; any other is not. */
  private feedPreview(key: string, obj: NodeMaintenanceObject | undefined): void {
    if (!this.d.previewFeed) return;
    const t = obj && !obj.metadata.deletionTimestamp ? this.d.trackers.get(obj.metadata.uid) : undefined;
    const inputs = t?.state?.stage === 'Idle' && !t.closed ? t.state.previewInputs : undefined;
    const nodeSelector = (obj?.spec as { nodeSelector?: NodeSelector } | undefined)?.nodeSelector;
    this.d.previewFeed.observe(key, inputs && t && nodeSelector ? { workflowId: t.workflowId, inputs, nodeSelector } : undefined);
  }

  private desired(obj: NodeMaintenanceObject, t: T | undefined): MaintenanceDesired {
    return desiredMaintenance({ obj, workflow: t, now: this.now() });
  }

  /**
   * A new generation (or a changed allow-all-nodes annotation) goes to the workflow as the update
   * `specChanged`. A refusal (CEL refuses the same edits at admission, so the rule was bypassed) is
   * a Warning Event; the generation counts as observed either way (NM-2.16).
   */
  private async applySpecChange(obj: NodeMaintenanceObject, t: T): Promise<void> {
    if (t.closed) return this.observeClosed(obj, t);
    const key = t.key;
    const sent = this.sentAllow.get(key);
    const change = specChangeToSend(obj, t, sent?.uid === obj.metadata.uid ? sent.allow : undefined);
    if (!change) return;
    const parsed = NodeMaintenanceSpec.safeParse(obj.spec);
    this.mustLead();
    const outcome = parsed.success
      ? await this.d.workflows.changeSpec(t.workflowId, { spec: obj.spec as MaintenanceStartSpec, generation: change.generation, allowAllNodes: change.allowAllNodes })
      : { applied: false as const, reason: invalidSpecMessage(parsed.error) };
    if ('closed' in outcome && outcome.closed) {
      // It closed first (Complete from Idle ends at once): its close report settles the generation.
      this.d.log(`${key}: generation ${change.generation} not sent, workflow ${t.workflowId} has closed`, { ...objectFields('NodeMaintenance', key), workflowId: t.workflowId });
      if (t.closed) await this.observeClosed(obj, t);
      return;
    }
    this.sentAllow.set(key, { uid: obj.metadata.uid, allow: change.allowAllNodes });
    if (change.newGeneration) t.generation = change.generation;
    const what = change.newGeneration ? `generation ${change.generation}` : `allow-all-nodes ${change.allowAllNodes}`;
    if (!outcome.applied) {
      await this.event(obj, { type: 'Warning', reason: 'SpecChangeRefused', message: `${what} not applied: ${outcome.reason}`, dedup: `SpecChangeRefused/${t.workflowId}/${change.generation}/${change.allowAllNodes}` });
    }
    this.d.log(`${key}: ${what} ${outcome.applied ? `applied (stage ${outcome.stage})` : `refused: ${outcome.reason}`}`, objectFields('NodeMaintenance', key));
  }

  /**
   * A closed workflow takes no edit: the object's generation counts as observed all the same, with a
   * Warning when the workflow never acted on it (the final state names the last one it did: a
   * setStage that ended it wrote that generation itself). A deletion's generation bump gets no Warning.
   */
  private async observeClosed(obj: NodeMaintenanceObject, t: T): Promise<void> {
    const last = closedMaintenance(t.closed!, t.state, t.workflowId).state;
    const seen = closedGeneration(obj.metadata.generation, t.generation, last?.observedGeneration);
    if (!seen) return;
    t.generation = seen.generation;
    if (seen.applied || obj.metadata.deletionTimestamp) return;
    const why = `workflow ${t.workflowId} has ${t.closed!.statusName.toLowerCase().replace(/_/g, ' ')}`;
    await this.event(obj, { type: 'Warning', reason: 'SpecChangeRefused', message: `generation ${seen.generation} not applied: ${why}`, dedup: `SpecChangeRefused/${t.workflowId}/${seen.generation}/closed` });
    this.d.log(`${t.key}: generation ${seen.generation} not applied: ${why}`, objectFields('NodeMaintenance', t.key));
  }

  /**
   * Tells the running workflows whose object is gone (see orphanedMaintenances) that it was
   * deleted, so an Idle maintenance deleted while no bridge led still ends. Only on a synced cache.
   */
  async sweep(graceMs: number): Promise<void> {
    const live = new Set([...this.d.maintenances.values()].map((o) => o.metadata.uid));
    const running = await this.d.workflows.listRunning(1000);
    for (const id of this.toldOrphans) if (!running.some((w) => w.workflowId === id)) this.toldOrphans.delete(id);
    for (const id of orphanedMaintenances(running, live, this.now(), graceMs)) {
      if (this.toldOrphans.has(id)) continue; // told once; it ends in its own time
      this.mustLead();
      const told = await this.d.workflows.deleting(id);
      this.toldOrphans.add(id);
      if (told) this.d.log(`${id}: its NodeMaintenance is gone; told the workflow`, { workflowId: id });
    }
  }

  // ---- deletion ----------------------------------------------------------------------------------

  /** The object is gone (or recreated): an Idle maintenance's workflow is told, so it ends (NM-2.11). */
  private async gone(key: string, uid?: string): Promise<void> {
    for (const t of this.d.trackers.byKey(key)) {
      if (uid && t.uid !== uid) continue;
      if (!t.closed && !t.cancelRequested) await this.tell(key, t);
      this.d.trackers.untrack(t.uid);
    }
    if (!uid || this.sentAllow.get(key)?.uid === uid) this.sentAllow.delete(key);
  }

  /** Signals `deleting` once per workflow; a workflow that is gone needs nothing. */
  private async tell(key: string, t: T): Promise<void> {
    this.mustLead();
    const told = await this.d.workflows.deleting(t.workflowId);
    t.cancelRequested = true;
    this.d.log(`${key}: deleted; ${told ? `told workflow ${t.workflowId}` : `workflow ${t.workflowId} is not running`}`, { ...objectFields('NodeMaintenance', key), workflowId: t.workflowId });
  }

  private async deleting(obj: NodeMaintenanceObject, tracked: T | undefined): Promise<void> {
    const key = `/${obj.metadata.name}`;
    let t = tracked;
    const workflowId = maintenanceWorkflowId(obj.metadata);
    if (!t) {
      const d = await this.d.workflows.describe(workflowId);
      if (d) t = this.d.trackers.track({ key, uid: obj.metadata.uid, workflowId, runId: d.runId, generation: obj.status?.observedGeneration });
    }
    if (t?.closed) await this.observeClosed(obj, t);
    const want = this.desired(obj, t);
    const step = want.deletion;
    switch (step.kind) {
      case 'none':
        return;
      case 'tell':
        // Idle (no finalizer of ours): only other finalizers keep it; the workflow ends now.
        if (t && !t.closed && !t.cancelRequested) await this.tell(key, t);
        return;
      case 'complete': {
        let cur = obj;
        if (step.patchStage) {
          this.mustLead();
          try {
            cur = await this.d.objects.patchStage(obj, 'Complete');
            this.d.maintenances.put(cur);
            this.d.log(`${key}: deleted; spec.stage set to Complete`, objectFields('NodeMaintenance', key));
            failpoint('bridge.nm.after-stage-complete');
          } catch (err) {
            if (apiStatus(err) === 404 || apiStatus(err) === 409) return; // gone or recreated: its own events follow
            throw err;
          }
        }
        // The edited generation first (accepted: a forward stage), then `deleting` (setStage is refused from now on).
        await this.applySpecChange(cur, t!);
        if (!t!.cancelRequested) await this.tell(key, t!);
        await this.apply(cur, this.desired(cur, t));
        return; // the tracker's next answer (completed) brings it back here
      }
      case 'stuck':
        await this.apply(obj, want);
        this.d.log(`${key}: deleting, but ${step.why}; the finalizer ${MAINTENANCE_FINALIZER} stays until the nodes are released`, objectFields('NodeMaintenance', key));
        return;
      case 'release': {
        await this.apply(obj, want).catch((err: unknown) => {
          if (err instanceof NotLeaderError) throw err;
          this.d.log(`${key}: final status not mirrored (${err instanceof Error ? err.message : String(err)}); removing the finalizer anyway`, objectFields('NodeMaintenance', key));
        });
        if (obj.metadata.finalizers?.includes(MAINTENANCE_FINALIZER)) failpoint('bridge.nm.before-finalizer-removal');
        if (await this.removeFinalizer(obj)) {
          this.d.stats.finalizersRemoved++;
          this.d.log(`${key}: removed finalizer ${MAINTENANCE_FINALIZER}${t ? ` (workflow ${t.workflowId} completed)` : ' (no workflow)'}`, { ...objectFields('NodeMaintenance', key), workflowId: t?.workflowId });
        }
        if (t) this.d.trackers.untrack(t.uid);
        return;
      }
    }
  }

  /** Removes our finalizer with the resourceVersion read (409: read again, retry). */
  private async removeFinalizer(obj: NodeMaintenanceObject): Promise<boolean> {
    let cur: NodeMaintenanceObject | undefined = obj;
    for (let attempt = 0; ; attempt++) {
      if (!cur || cur.metadata.uid !== obj.metadata.uid || !cur.metadata.finalizers?.includes(MAINTENANCE_FINALIZER)) return false;
      this.mustLead();
      try {
        const updated = await this.d.objects.setFinalizers(cur, cur.metadata.finalizers.filter((f) => f !== MAINTENANCE_FINALIZER));
        this.d.maintenances.put(updated);
        return true;
      } catch (err) {
        const code = apiStatus(err);
        if (code === 404) return false;
        if (code !== 409 || attempt >= 3) throw err;
        cur = await this.d.objects.get(obj.metadata.name);
        if (cur) this.d.maintenances.put(cur);
      }
    }
  }

  // ---- writes ------------------------------------------------------------------------------------

  /** Its Events, then its status; a status write to an object that is gone is skipped. */
  private async apply(obj: NodeMaintenanceObject, want: MaintenanceDesired): Promise<void> {
    if (!want.status) return;
    for (const ev of want.events) await this.event(obj, ev);
    this.mustLead();
    try {
      const updated = await this.d.objects.patchStatus(obj, want.status.patch);
      this.d.stats.statusWrites++;
      this.d.maintenances.put(updated);
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
      this.d.log(`/${obj.metadata.name}: status not written, the object is gone`, objectFields('NodeMaintenance', `/${obj.metadata.name}`));
      return;
    }
    this.d.log(want.invalidSpec ? `/${obj.metadata.name}: ${want.invalidSpec}` : `/${obj.metadata.name}: status ${want.status.next.message ?? ''}`, objectFields('NodeMaintenance', `/${obj.metadata.name}`));
  }

  private mustLead(): void {
    if (!this.d.isLeader()) throw new NotLeaderError();
  }
}

/** The spec as stored (checked by zod before any start or update); the workflow parses it again. */
type MaintenanceStartSpec = import('../../../workflows/maintenance/types.js').MaintenanceInput['spec'];
