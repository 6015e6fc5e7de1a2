// The bridge while it leads: one term per kind, each in its own folder (cycle/, maintenance/,
// node-group/, budget/) with its controller (kube/controller/), reconciler and, for the kinds with
// a workflow per object, that workflow's trackers (tracker.ts: a source of changes from outside the
// cluster). What every kind uses sits beside this file (kit.ts, temporal.ts, workflow-status.ts,
// kube-objects.ts). A new Bridge is built for each leadership term and stopped when it ends.
import type { Client } from '@temporalio/client';
import type { Kube } from '../../kube/client.js';
import { budgetTerm } from './budget/term.js';
import { cycleTerm } from './cycle/term.js';
import { NotLeaderError, WORKFLOW_KIND_RESYNC_MS, type BridgeStats } from './kit.js';
import { maintenanceTerm } from './maintenance/term.js';
import { nodeGroupTerm } from './node-group/term.js';
import { reconcileKindsKnown, setBridgeView, type BridgeView } from './metrics.js';
import type { Log } from '../../shared/log.js';
import { CYCLE_REQUEST_LABEL } from '../../api/cycle-node-request.js';

/** What the bridge is told to do, whoever starts it (startBridge in main.ts fills in the rest). */
export interface BridgeSettings {
  /** Watch only this namespace's CycleNodeRequests (default: all; NodeMaintenances are cluster-scoped). */
  namespace?: string;
  /** Act only on requests in these namespaces, refusing others with an Event (default: all watched). */
  allowedNamespaces?: readonly string[];
  /** Reconcile NodeMaintenances too (default true). */
  maintenances?: boolean;
  /** Run NodeGroups' drift observers too (default true). */
  nodeGroups?: boolean;
  /** Keep NodeDisruptionBudgets' status current too (default true). */
  budgets?: boolean;
  /** Only the NodeMaintenances with these labels (a label selector; default: all). */
  maintenanceSelector?: string;
  /** A running maintenance workflow without an object is told it was deleted once it is this old (default 60 s). */
  orphanGraceMs?: number;
  /** At most one status query per running workflow per this interval (sent only after its workflow tasks; default 250 ms). */
  queryIntervalMs?: number;
  /** How often a running workflow with children, task trouble or failing queries is checked for a failing workflow task. */
  taskCheckIntervalMs?: number;
  queryTimeoutMs?: number;
  /** Every object is reconciled at least this often (a safety net; a no-op when nothing changed). */
  resyncIntervalMs?: number;
  concurrency?: number;
}

export interface BridgeOptions extends BridgeSettings {
  kube: Kube;
  client: Client;
  taskQueue: string;
  isLeader: () => boolean;
  stats: BridgeStats;
  log: Log;
}

export class Bridge {
  private readonly view: BridgeView;
  private readonly cycle: ReturnType<typeof cycleTerm>;
  private readonly maintenance?: ReturnType<typeof maintenanceTerm>;
  private readonly nodeGroups?: ReturnType<typeof nodeGroupTerm>;
  private readonly budgets?: ReturnType<typeof budgetTerm>;
  private sweep?: NodeJS.Timeout;

  constructor(private readonly o: BridgeOptions) {
    const cycle = (this.cycle = cycleTerm(o));
    const maintenance = (this.maintenance = o.maintenances !== false ? maintenanceTerm(o) : undefined);
    const nodeGroups = (this.nodeGroups = o.nodeGroups !== false ? nodeGroupTerm(o) : undefined);
    const budgets = (this.budgets = o.budgets !== false ? budgetTerm(o) : undefined);
    // What a scrape reads (starter/bridge/metrics.ts): the caches as they are, no copy.
    this.view = {
      requests: () => cycle.requests.values(),
      maintenances: () => maintenance?.maintenances.values() ?? [],
      budgets: () => budgets?.budgets.values() ?? [],
      queueDepth: () => ({
        CycleNodeRequest: cycle.controller.queueDepth(),
        ...(maintenance ? { NodeMaintenance: maintenance.controller.queueDepth() } : {}),
        ...(nodeGroups ? { NodeGroup: nodeGroups.controller.queueDepth() } : {}),
        ...(budgets ? { NodeDisruptionBudget: budgets.controller.queueDepth() } : {}),
      }),
      synced: () => this.isSynced(),
    };
  }

  /** Every cache of this term holds a full list (the bridge's readiness while it leads). */
  isSynced(): boolean {
    return this.cycle.controller.isSynced() && (this.maintenance?.controller.isSynced() ?? true) && (this.nodeGroups?.controller.isSynced() ?? true) && (this.budgets?.controller.isSynced() ?? true);
  }

  start(): void {
    setBridgeView(this.view);
    // The kinds' error series exist from the start (at 0), as Prometheus conventions want.
    reconcileKindsKnown(Object.keys(this.view.queueDepth()));
    this.cycle.controller.start(this.cycle.reconciler);
    this.cycle.trackers.start();
    if (this.nodeGroups) this.nodeGroups.controller.start(this.nodeGroups.reconciler);
    if (this.budgets) this.budgets.controller.start(this.budgets.reconciler);
    if (this.maintenance) {
      const m = this.maintenance;
      m.controller.start(m.reconciler);
      m.trackers.start();
      m.heldNodes.start(); // its first list tells every held node's coordinator once (a new term may follow a gap)
      let sweeping = false;
      this.sweep = setInterval(() => {
        if (sweeping || !m.controller.isSynced() || !this.o.isLeader()) return;
        sweeping = true;
        m.reconciler
          .sweep(this.o.orphanGraceMs ?? 60_000)
          .catch((err: unknown) => {
            if (!(err instanceof NotLeaderError)) this.o.log(`looking for maintenance workflows without an object: ${err instanceof Error ? err.message : String(err)}`, { level: 'warn' });
          })
          .finally(() => {
            sweeping = false;
          });
      }, this.o.resyncIntervalMs ?? WORKFLOW_KIND_RESYNC_MS);
    }
  }

  async stop(): Promise<void> {
    setBridgeView(undefined, this.view);
    if (this.sweep) clearInterval(this.sweep);
    this.cycle.trackers.stop();
    this.maintenance?.trackers.stop();
    await Promise.all([this.cycle.controller.stop(), this.maintenance?.controller.stop(), this.maintenance?.previewFeed.close(), this.maintenance?.heldNodes.close(), this.nodeGroups?.controller.stop(), this.budgets?.controller.stop()]);
  }
}
