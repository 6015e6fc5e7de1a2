// Scripted stand-ins for the NodeMaintenance activities (activities/maintenance/*), for workflow
// tests: a set of nodes with the maintenance state the node coordinators write, an object with its
// finalizer and spec.stage. Each answer follows the real activity's contract; every call is logged.
import type { HoldInput, HoldResult } from '../../activities/maintenance/node-state.js';
import type { Selection } from '../../activities/maintenance/select.js';
import type { PreviewInput, PreviewResult } from '../../activities/maintenance/preview.js';
import { nodePreview } from '../../activities/maintenance/preview-plan.js';
import type { NodePreview } from '../../shared/maintenance-preview.js';
import type { EventInput } from '../../activities/events.js';
import { Context } from '@temporalio/activity';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { maintenanceStatusQuery, nodeChangedSignal } from '../../workflows/messages.js';
import type { MaintenanceInput, MaintenanceStatus } from '../../workflows/maintenance/types.js';
import type { NodeWatchInput, SelectionWatchInput } from '../../activities/maintenance/watch.js';
import { CallLog, until } from './scripted.js';
import { FakeBudget } from './fake-budget.js';
import { waitFor } from './wait.js';
import type { WorkflowTestEnv } from './workflow-env.js';

export interface FakeNode {
  labels: Record<string, string>;
  cordoned: boolean;
  heldBy: string[];
  wasUnschedulable?: boolean;
  state?: string;
  /** A CycleNodeRequest's claim ("ns/name"): the coordinator's write leaves the node alone and reports it (NM-7.7). */
  claimedBy?: string;
}

export class FakeCluster extends CallLog {
  readonly nodes = new Map<string, FakeNode>();
  /** Nodes in the cluster that the test's selector does not take (for "selects every node"). */
  others = 1;
  /** The limit selectMaintenanceNodes reports (the worker's SLIPWAY_MAINTENANCE_MAX_NODES); default: none. */
  maxNodes?: number;
  finalizer = false;
  stage = 'Idle';
  generation = 1;
  readonly events: EventInput[] = [];
  /** What previewMaintenance says it read (the workflow adds the nodes and shows it in its status query). */
  previewInputs: PreviewResult['inputs'] = { from: { pods: '1', pdbs: '1', drainRules: '1', nodes: '1' }, namespaces: ['team-a'], blockingPdbs: [] };
  /** What previewMaintenance answers per node (default: a node with no pods). */
  readonly previews = new Map<string, NodePreview>();
  /** The NodeDisruptionBudget the coordinators ask; default: none selects the nodes. Its calls are logged there. */
  budget = new FakeBudget();
  /** Every node write as asked (with or without the coordinator's budget slot), in order. */
  readonly slotWrites: Array<{ node: string; release: boolean; holder?: string }> = [];
  /** spec.reason as setStage last wrote it. */
  reason?: string;
  /** Awaited by writeMaintenanceStage after its write, before it answers (the bridge's echo of the write can come first). */
  afterStageWrite: (i: { stage: string; reason?: string }, generation: number) => Promise<void> = async () => undefined;
  /** Awaited by every node write before it applies (a test holds a write in flight with it). */
  beforeNodeWrite: (i: HoldInput) => Promise<void> = async () => undefined;

  /** nodeChanged signals the bridge's stand-in sent, by node. */
  readonly nodeSignals: string[] = [];
  private bridge?: NodeJS.Timeout;

  constructor(nodes: string[]) {
    super();
    for (const n of nodes) this.nodes.set(n, { labels: {}, cordoned: false, heldBy: [] });
  }

  /** Every node write, in order: `node: holders` ('' when released). */
  nodeWrites(): string[] {
    return this.callsOf('writeMaintenanceNodeState').map((c) => {
      const i = c.input as HoldInput;
      return `${i.node}: ${i.holders.join(',')}`;
    });
  }

  /** The selection as selectMaintenanceNodes answers it now (every fake node; `others` besides). */
  selection(): Selection {
    const nodes = [...this.nodes.keys()].sort();
    return { nodes, totalNodes: nodes.length + this.others, controlPlaneNodes: 0, controlPlaneSelected: 0, ...(this.maxNodes !== undefined && { maxNodes: this.maxNodes }) };
  }

  /** What the node watch reacts to (activities/maintenance/watch.ts nodeChange): gone or back, uncordoned, held-by removed. */
  private nodeChanged(w: NodeWatchInput): boolean {
    const n = this.nodes.get(w.node);
    if (!n !== !w.exists) return true;
    if (n && n.claimedBy !== w.claimedBy) return true; // a cycle's claim came or went (NM-7.7)
    return !!n && w.held && (!n.cordoned || !n.heldBy.length);
  }

  /**
   * The bridge's held-nodes feed (starter/bridge/maintenance/held-nodes.ts), played on the fake: from
   * the first node write on (with that activity's client), every 50 ms, a node whose look changed in
   * a way a holder cares about (gone or back, claim, uncordoned or held-by gone while held) gets
   * nodeChanged; at its start, every held or claimed node once (its first list).
   */
  private startBridge(client: Client): void {
    if (this.bridge) return;
    const seen = new Map<string, string>();
    const look = (n: FakeNode | undefined) => {
      const marked = !!n && (n.heldBy.length > 0 || n.state !== undefined);
      return JSON.stringify([!!n, n?.claimedBy ?? null, marked && (!n!.cordoned || !n!.heldBy.length)]);
    };
    const tell = (node: string) => {
      this.nodeSignals.push(node);
      // No coordinator runs (WorkflowNotFoundError), or the test's worker is gone: nothing to tell.
      client.workflow.getHandle(maintenanceNodeWorkflowId(node)).signal(nodeChangedSignal).catch(() => undefined);
    };
    for (const [name, n] of this.nodes) {
      seen.set(name, look(n));
      if (n.heldBy.length || n.claimedBy) tell(name);
    }
    this.bridge = setInterval(() => {
      for (const name of new Set([...seen.keys(), ...this.nodes.keys()])) {
        const now = look(this.nodes.get(name));
        const before = seen.get(name) ?? look(undefined);
        if (before === now) continue;
        seen.set(name, now);
        const [a, b] = [JSON.parse(before), JSON.parse(now)] as [boolean, string | null, boolean][];
        // Its own re-cordon (uncordoned → cordoned) tells nothing; the rest does.
        if (a![0] !== b![0] || a![1] !== b![1] || b![2]) tell(name);
      }
    }, 50);
    this.bridge.unref();
  }

  stopBridge(): void {
    clearInterval(this.bridge);
  }

  activities() {
    const budget = this.budget.activities();
    const write = this.nodeWrite();
    return {
      ...budget,
      // The slot of a write with `slot` (the coordinator's, #27 hand-over) in the same activity, as
      // activities/maintenance/node-state.ts does: its budget calls and the write logged on their own.
      writeMaintenanceNodeState: async ({ slot, ...i }: HoldInput): Promise<HoldResult> => {
        this.slotWrites.push({ node: i.node, release: !i.holders.length, holder: slot?.holder });
        if (!slot) return write(i);
        const ask = { holder: slot.holder, nodes: [i.node] };
        if (!i.holders.length) {
          const r = await write(i);
          await budget.releaseDisruption(ask);
          return r;
        }
        const refused = (await budget.acquireDisruption(ask)).waiting.find((w) => w.node === i.node);
        if (refused) return { exists: true, reverted: false, slotRefused: refused.reason };
        return write(i);
      },
      selectMaintenanceNodes: this.logged('selectMaintenanceNodes', async (): Promise<Selection> => this.selection()),
      // The waits: they end on a change of the fake, or at the renewal period (default: as the real ones, 20 min).
      watchMaintenanceNode: this.logged('watchMaintenanceNode', async (w: NodeWatchInput) => {
        const changed = await until(() => this.nodeChanged(w), w.renewMs ?? 20 * 60_000);
        return changed ? { changed: 'changed' } : {};
      }),
      watchMaintenanceSelection: this.logged('watchMaintenanceSelection', async (w: SelectionWatchInput) => {
        const differs = () => {
          const s = this.selection();
          return s.totalNodes !== w.totalNodes || s.nodes.join() !== w.nodes.join();
        };
        const changed = await until(differs, w.renewMs ?? 20 * 60_000);
        return { changed, selection: this.selection() };
      }),
      previewMaintenance: this.logged('previewMaintenance', async (i: PreviewInput): Promise<PreviewResult> => {
        const nodes = i.nodes.map((node) => this.previews.get(node) ?? nodePreview({ node, exists: true, plan: i.plan, verdicts: [], pods: [], pdbs: [], errors: [] }));
        const digest = JSON.stringify(nodes);
        const computedAt = new Date().toISOString();
        const inputs = this.previewInputs;
        return digest === i.previous ? { digest, unchanged: true, computedAt, inputs } : { digest, computedAt, nodes, inputs };
      }),
      ensureMaintenanceFinalizer: this.logged('ensureMaintenanceFinalizer', async () => {
        this.finalizer = true;
        return true;
      }),
      writeMaintenanceStage: this.logged('writeMaintenanceStage', async (i: { stage: string; reason?: string }) => {
        if (i.stage !== 'Idle') this.finalizer = true;
        if (this.stage !== i.stage || (i.reason !== undefined && i.reason !== this.reason)) this.generation++;
        this.stage = i.stage;
        if (i.reason !== undefined) this.reason = i.reason;
        await this.afterStageWrite(i, this.generation);
        return { generation: this.generation, exists: true };
      }),
      recordEvent: this.logged('recordEvent', async (e: EventInput) => {
        this.events.push(e);
      }),
    };
  }

  /** The node write as the fake cluster answers it (logged). */
  private nodeWrite() {
    return this.logged('writeMaintenanceNodeState', async (i: HoldInput): Promise<HoldResult> => {
      this.startBridge(Context.current().client);
      await this.beforeNodeWrite(i);
      const n = this.nodes.get(i.node);
      if (!n) return { exists: false, reverted: false };
      if (n.claimedBy && i.holders.length) return { exists: true, reverted: false, claimedBy: n.claimedBy };
      let reverted = false;
      if (i.holders.length) {
        if (!n.heldBy.length && n.cordoned) n.wasUnschedulable = true;
        reverted = n.heldBy.length > 0 && !n.cordoned;
        n.cordoned = true;
        n.heldBy = [...i.holders].sort();
        n.state = i.state;
      } else {
        if (n.heldBy.length && !n.wasUnschedulable) n.cordoned = false;
        n.heldBy = [];
        n.state = undefined;
        n.wasUnschedulable = undefined;
      }
      return { exists: true, reverted };
    });
  }
}

// ---- Starting and watching maintenances in workflow tests (uid `uid-<name>`, created at a fixed time).

/** Selects the nodes labelled pool=a (the fake's selection ignores it; the admission check reads it). */
export const SELECTOR = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In' as const, values: ['a'] }] }] };

export async function startMaintenance(t: WorkflowTestEnv, taskQueue: string, name: string, spec: Partial<MaintenanceInput['spec']> = {}, more: Partial<MaintenanceInput> = {}) {
  const input: MaintenanceInput = { name, uid: `uid-${name}`, createdAt: '2026-11-23T10:00:00Z', spec: { nodeSelector: SELECTOR, ...spec }, generation: 1, ...more };
  return t.client.workflow.start(nodeMaintenanceWorkflow, { taskQueue, workflowId: maintenanceWorkflowId(input), args: [input], workflowExecutionTimeout: '2 minutes' });
}

/** The maintenance's status once `ok` holds. */
export const maintenanceStatusWhen = (h: WorkflowHandle, what: string, ok: (s: MaintenanceStatus) => boolean) =>
  waitFor(what, async () => {
    const s = await h.query(maintenanceStatusQuery);
    return ok(s) ? s : undefined;
  }, { timeoutMs: 45_000, intervalMs: 100 });

/** The workflows a test's activities answer: its maintenances and the coordinators of its nodes. */
export const maintenanceTestIds = (names: string[], nodes: string[]) => [...names.map((n) => maintenanceWorkflowId({ name: n, uid: `uid-${n}` })), ...nodes.map(maintenanceNodeWorkflowId)];
