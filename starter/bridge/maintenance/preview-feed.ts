// The Idle previews' feed of changes (#24.5): while at least one NodeMaintenance is Idle, one watch
// per kind (pods, PDBs, DrainRules, Nodes) for the whole cluster, whatever the number of Idle
// maintenances; none while there is none. Each event is judged against what each Idle maintenance's
// latest preview read (preview-inputs.ts, from its status query); an affected maintenance's workflow
// gets `previewInputsChanged` once the changes settle (debounced per maintenance), and recomputes.
// The watches are streams only: no object is cached (a pod event is judged and dropped). The
// workflow waits with no timer, so the feed covers its own gaps: a maintenance first seen (a new
// leader, a restarted bridge, a new object) whose preview read before what the watches have told
// since is told once (FeedReach), and a watch that must start again from now (its version gone) has
// every Idle preview recomputed.
import { CustomObjectsApi, PolicyV1Api, type KubeConfig, type KubernetesObject, type V1Node, type V1Pod, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../../api/drain-rule.js';
import type { Kube } from '../../../kube/client.js';
import { listWatch, type WatchEventType } from '../../../kube/listwatch.js';
import type { NodeSelector } from '../../../api/node-maintenance.js';
import type { PreviewInputs, PreviewReadFrom } from '../../../shared/maintenance-preview.js';
import { Debounce, FeedReach, mayMatter, PreviewWatchers, type FeedEventType } from './preview-inputs.js';
import type { Log } from '../../../shared/log.js';
import { API_VERSION } from '../../../api/names.js';

export interface IdlePreview {
  workflowId: string;
  inputs: PreviewInputs;
  nodeSelector: NodeSelector;
}

export interface PreviewFeedOptions {
  kube: Kube;
  /** Sends previewInputsChanged; false: no such workflow runs (nothing to tell). */
  tell: (workflowId: string) => Promise<boolean>;
  /** Checked before each signal: only the leader tells. */
  isLeader: () => boolean;
  /** Counts the signals sent (previewSignals). */
  stats: { previewSignals: number };
  log: Log;
  settleMs?: number;
  settleMaxMs?: number;
}

export class PreviewFeed {
  private readonly watchers = new PreviewWatchers();
  private readonly debounce: Debounce;
  private readonly workflowIds = new Map<string, string>();
  /** How far the watches have told (since they began): a preview read before may have missed a change. */
  private readonly reach = new FeedReach();
  private streams?: { stop: AbortController; done: Promise<unknown> };
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly o: PreviewFeedOptions) {
    this.debounce = new Debounce(o.settleMs, o.settleMaxMs);
  }

  /** Watches `key` while it is Idle with a preview (called on each reconcile); undefined: no longer. */
  observe(key: string, idle: IdlePreview | undefined): void {
    if (this.closed) return;
    const first = !!idle && !this.workflowIds.has(key);
    this.watchers.set(key, idle?.inputs, idle?.nodeSelector);
    if (idle) this.workflowIds.set(key, idle.workflowId);
    else {
      this.workflowIds.delete(key);
      this.debounce.forget(key);
    }
    if (this.watchers.size && !this.streams) this.start(idle!.inputs.from);
    else if (!this.watchers.size && this.streams) void this.stopStreams();
    // First seen, with a preview read before what the watches have told since: it may have missed a change.
    if (first && this.reach.behind(idle.inputs.from)) this.changed([key]);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.stopStreams();
  }

  /** The four watches, from where the first preview read (so nothing after its reads is missed). */
  private start(from: PreviewReadFrom): void {
    const stop = new AbortController();
    const kc: KubeConfig = this.o.kube.config;
    this.reach.clear();
    for (const what of ['pods', 'pdbs', 'drainRules', 'nodes'] as const) this.reach.reached(what, from[what]);
    const w = this.watchers;
    const watch = <T extends KubernetesObject>(path: string, what: keyof PreviewReadFrom, judge: (type: FeedEventType, o: T) => string[]) => {
      let resumeFrom: string | undefined = from[what] || undefined;
      return listWatch<T>({
        kc,
        path,
        // No items: a stream, not a cache. After the first, a list means the version was gone (410).
        list: async () => {
          const rv = resumeFrom ?? (await this.versionNow(what));
          if (!resumeFrom) {
            // Watched from now (the version was gone: 410, or a busy kind's watch cache moved past
            // it): a change in between may be missed, so every Idle preview is recomputed once.
            this.o.log(`preview feed: ${path} watched from now; every Idle maintenance recomputes its preview`);
            this.changed(this.watchers.keys());
          }
          resumeFrom = undefined;
          this.reach.reached(what, rv);
          return { items: [], resourceVersion: rv };
        },
        onList: () => false,
        onEvent: (type: WatchEventType, o: T) => {
          if (mayMatter(what, type, o)) this.reach.reached(what, o.metadata?.resourceVersion);
          this.changed(judge(type, o));
          return false;
        },
        segmentMs: 300_000,
        segmentEndedBy: 'server',
        afterSegment: 'resume',
        listErrors: 'retry',
        backoff: { initialMs: 500, maxMs: 10_000 },
        signal: stop.signal,
        log: (msg: string) => this.o.log(msg, { level: 'warn', path }), // its only lines: watch errors, retried
      });
    };
    // Literal paths: the RBAC test reads what the bridge watches from here.
    const done = Promise.allSettled([
      watch<V1Pod>('/api/v1/pods', 'pods', (t, o) => w.pod(t, o)),
      watch<V1PodDisruptionBudget>('/apis/policy/v1/poddisruptionbudgets', 'pdbs', (t, o) => w.pdb(t, o)),
      watch<KubernetesObject>(`/apis/${API_VERSION}/drainrules`, 'drainRules', (t, o) => w.rule(t, o)),
      watch<V1Node>('/api/v1/nodes', 'nodes', (t, o) => w.node(t, o)),
    ]);
    this.streams = { stop, done };
    this.o.log('preview feed: watching pods, PodDisruptionBudgets, DrainRules and Nodes for the Idle maintenances');
  }

  /** A collection's resourceVersion now (a one-item list): watching from it misses nothing after. */
  private async versionNow(what: keyof PreviewReadFrom): Promise<string> {
    const { kube } = this.o;
    const list: Record<keyof PreviewReadFrom, () => Promise<{ metadata?: { resourceVersion?: string } }>> = {
      pods: () => kube.core.listPodForAllNamespaces({ limit: 1 }),
      pdbs: () => kube.config.makeApiClient(PolicyV1Api).listPodDisruptionBudgetForAllNamespaces({ limit: 1 }),
      drainRules: () => kube.config.makeApiClient(CustomObjectsApi).listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, limit: 1 }),
      nodes: () => kube.core.listNode({ limit: 1 }),
    };
    return (await list[what]()).metadata?.resourceVersion ?? '';
  }

  private async stopStreams(): Promise<void> {
    const s = this.streams;
    if (!s) return;
    this.streams = undefined;
    s.stop.abort();
    await s.done;
    if (!this.closed) this.o.log('preview feed: no Idle maintenance; watches stopped');
  }

  private changed(keys: string[]): void {
    if (!keys.length) return;
    const now = Date.now();
    for (const k of keys) this.debounce.mark(k, now);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    const at = this.debounce.nextAt();
    if (at === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      for (const key of this.debounce.due(Date.now())) void this.tell(key);
      this.schedule();
    }, Math.max(0, at - Date.now()));
  }

  private async tell(key: string): Promise<void> {
    const id = this.workflowIds.get(key);
    if (!id || !this.o.isLeader()) return;
    try {
      if (await this.o.tell(id)) this.o.stats.previewSignals++;
    } catch (err) {
      this.o.log(`preview feed: telling ${id} its preview's inputs changed: ${err instanceof Error ? err.message : String(err)} (its own refresh covers it)`, { workflowId: id, level: 'warn' });
    }
  }
}
