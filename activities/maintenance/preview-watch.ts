// watchPreviewInputs: while a maintenance is Idle, waits (watching, not polling) until something
// its preview was computed from changes: a pod on a selected node, a PodDisruptionBudget of their
// namespaces, a DrainRule, or which nodes the selector takes. It watches from the resourceVersions
// the preview read at (previewMaintenance's `watch`), so a change between the two is not missed;
// it answers once the changes have settled (debounced) or after `maxMs` with nothing. Read-only.
import { Context } from '@temporalio/activity';
import { CustomObjectsApi, PolicyV1Api, type KubernetesObject, type V1Node, type V1Pod, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { NodeSelector } from '../../api/node-maintenance.js';
import { matchesNodeSelector } from '../../api/node-selector.js';
import type { Kube } from '../kube.js';
import { listWatch, type WatchEventType } from '../listwatch.js';

/** Where the watches start: the resourceVersions read just before a preview's reads. */
export interface PreviewWatchFrom {
  pods: string;
  pdbs: string;
  drainRules: string;
  nodes: string;
}

/** What a preview was computed from, for the watch that follows it (small: it travels in workflow history). */
export interface PreviewWatchHint {
  from: PreviewWatchFrom;
  /** Namespaces of the previewed pods: only their PDBs matter. */
  namespaces: string[];
  /** `namespace/name` of the PDBs that allowed no disruption: a change of that is a change. */
  blockingPdbs: string[];
}

export interface PreviewWatchInput {
  hint: PreviewWatchHint;
  /** The selected nodes. */
  nodes: string[];
  nodeSelector: NodeSelector;
  /** Answers with nothing changed after this long (the workflow's safety net refresh). */
  maxMs: number;
}

export interface PreviewWatchResult {
  /** What changed (a few, for the activity's result in the Web UI); empty: maxMs passed. */
  changed: string[];
}

/** A change is answered once no other came for this long, */
export const SETTLE_MS = 1_000;
/** or this long after the first, */
const SETTLE_MAX_MS = 5_000;
/** and never sooner than this after the watch began (a busy node recomputes at most this often). */
export const MIN_WAIT_MS = 3_000;
const TICK_MS = 250;
const HEARTBEAT_MS = 5_000;

/** The resourceVersion of each collection now (one-item lists): watches from these miss nothing after. */
export async function previewWatchFrom(kube: Kube): Promise<PreviewWatchFrom> {
  const policy = kube.config.makeApiClient(PolicyV1Api);
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  const [pods, pdbs, rules, nodes] = await Promise.all([
    kube.core.listPodForAllNamespaces({ limit: 1 }),
    policy.listPodDisruptionBudgetForAllNamespaces({ limit: 1 }),
    custom.listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, limit: 1 }) as Promise<{ metadata?: { resourceVersion?: string } }>,
    kube.core.listNode({ limit: 1 }),
  ]);
  const rv = (l: { metadata?: { resourceVersion?: string } }) => l.metadata?.resourceVersion ?? '';
  return { pods: rv(pods), pdbs: rv(pdbs), drainRules: rv(rules), nodes: rv(nodes) };
}

/**
 * A status-only update (the newest managedFields entry is the status subresource's): pod readiness,
 * PDB counters. What the preview reads from a status (phase, disruptionsAllowed) is checked apart.
 */
function statusOnly(o: KubernetesObject): boolean {
  const fields = o.metadata?.managedFields ?? [];
  if (!fields.length) return false;
  const time = (f: { time?: Date | string }) => (f.time ? new Date(f.time).getTime() : 0);
  const newest = Math.max(...fields.map(time));
  return fields.filter((f) => time(f) === newest).every((f) => f.subresource === 'status');
}

export function createPreviewWatchActivities(kube: Kube) {
  return {
    /** Until something a preview read changes (settled), or maxMs: what changed. */
    async watchPreviewInputs(input: PreviewWatchInput): Promise<PreviewWatchResult> {
      const nodes = new Set(input.nodes);
      const namespaces = new Set(input.hint.namespaces);
      const blocking = new Set(input.hint.blockingPdbs);
      const stop = new AbortController();
      const cancelled = activitySignal();
      const onCancel = () => stop.abort();
      cancelled?.addEventListener('abort', onCancel);
      const started = Date.now();
      const changed: string[] = [];
      let first = 0;
      let last = 0;
      const note = (what: string) => {
        if (!changed.length) first = Date.now();
        last = Date.now();
        if (changed.length < 5) changed.push(what);
      };

      const pod = (type: WatchEventType, p: V1Pod) => {
        if (!nodes.has(p.spec?.nodeName ?? '')) return;
        const leaving = !!p.metadata?.deletionTimestamp || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
        if (type !== 'MODIFIED' || leaving || !statusOnly(p)) note(`pod ${p.metadata?.namespace}/${p.metadata?.name} ${type.toLowerCase()}`);
      };
      const pdb = (type: WatchEventType, b: V1PodDisruptionBudget) => {
        const ns = b.metadata?.namespace ?? '';
        if (!namespaces.has(ns)) return;
        const key = `${ns}/${b.metadata?.name}`;
        const blocks = type !== 'DELETED' && (b.status?.disruptionsAllowed ?? 0) <= 0;
        if (type !== 'MODIFIED' || !statusOnly(b) || blocks !== blocking.has(key)) note(`PodDisruptionBudget ${key} ${type.toLowerCase()}`);
        if (blocks) blocking.add(key);
        else blocking.delete(key);
      };
      const rule = (type: WatchEventType, r: KubernetesObject) => {
        if (type !== 'MODIFIED' || !statusOnly(r)) note(`DrainRule ${r.metadata?.name} ${type.toLowerCase()}`);
      };
      const node = (type: WatchEventType, n: V1Node) => {
        const name = n.metadata?.name ?? '';
        const selected = type !== 'DELETED' && matchesNodeSelector(input.nodeSelector, { name, labels: n.metadata?.labels ?? {} });
        if (selected !== nodes.has(name)) note(`node ${name} ${selected ? 'selected' : 'no longer selected'}`);
      };

      // The first "list" is the preview's resourceVersion; a later one (410 Gone: the version was
      // compacted away) may have missed a change, so it counts as one.
      const watch = <T extends KubernetesObject>({ path, what, onEvent }: { path: string; what: keyof PreviewWatchFrom; onEvent: (type: WatchEventType, o: T) => void }) => {
        const from = input.hint.from[what];
        let listed = false;
        return listWatch<T>({
          kc: kube.config,
          path,
          list: async () => {
            if (listed || !from) note(`${what}: watched again from now`);
            const fresh = listed || !from ? (await previewWatchFrom(kube))[what] : from;
            listed = true;
            return { items: [], resourceVersion: fresh };
          },
          onList: () => undefined,
          onEvent: (type, o) => onEvent(type, o),
          segmentMs: 60_000,
          segmentEndedBy: 'client',
          afterSegment: 'resume',
          listErrors: 'retry',
          backoff: { initialMs: 500, maxMs: 10_000 },
          signal: stop.signal,
        });
      };
      // Literal paths: the RBAC test reads watched paths from the code.
      const loops = [
        watch<V1Pod>({ path: '/api/v1/pods', what: 'pods', onEvent: pod }),
        watch<V1PodDisruptionBudget>({ path: '/apis/policy/v1/poddisruptionbudgets', what: 'pdbs', onEvent: pdb }),
        watch<KubernetesObject>({ path: '/apis/slipway.dev/v1alpha1/drainrules', what: 'drainRules', onEvent: rule }),
        watch<V1Node>({ path: '/api/v1/nodes', what: 'nodes', onEvent: node }),
      ];
      try {
        let beat = 0;
        for (;;) {
          await sleep(TICK_MS);
          const now = Date.now();
          if (now - beat >= HEARTBEAT_MS) {
            heartbeat(changed.length ? `changed: ${changed[0]}` : 'watching');
            beat = now;
          }
          if (stop.signal.aborted) break;
          const settled = changed.length > 0 && (now - last >= SETTLE_MS || now - first >= SETTLE_MAX_MS) && now - started >= MIN_WAIT_MS;
          if (settled || now - started >= input.maxMs) break;
        }
      } finally {
        stop.abort();
        cancelled?.removeEventListener('abort', onCancel);
        await Promise.allSettled(loops);
      }
      if (cancelled?.aborted) throw Context.current().cancellationSignal.reason ?? new Error('cancelled');
      return { changed };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function activitySignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined; // called outside an activity (a direct call in a test)
  }
}

function heartbeat(details: string): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // outside an activity: nothing to heartbeat
  }
}
