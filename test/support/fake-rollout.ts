// Scripted stand-ins for a rolling NodeMaintenance (docs/rolling-maintenance.md): the fake cluster of
// fake-maintenance.ts, whose nodes also carry a bootID, Ready and annotations (what the rollout's
// node read and completion watch look at, activities/maintenance/rollout.ts), a selection that
// answers each node's partition label, health checks that pass (or not), and one empty drain per
// node (FakeDrain, routed by the drain's workflow ID nm-node/<node>/drain).
import { Context } from '@temporalio/activity';
import type { Selection, SelectionAsk } from '../../activities/maintenance/select.js';
import type { SelectionWatchInput } from '../../activities/maintenance/watch.js';
import { nodeFacts, workDone, type RolloutWatchInput, type RolloutWatchResult } from '../../activities/maintenance/rollout.js';
import type { V1Node } from '@kubernetes/client-node';
import { FakeCluster, type FakeNode } from './fake-maintenance.js';
import { FakeDrain } from './fake-drain.js';
import { until } from './scripted.js';

export interface RolloutNode extends FakeNode {
  bootID?: string;
  ready?: boolean;
  annotations?: Record<string, string>;
  ip?: string;
  /** The Node's uid (default uid-<name>): a test re-creates the node by changing it. */
  uid?: string;
  /** "ns/name" of a CycleNodeRequest that claimed it (the claim annotation). */
  claimedBy?: string;
}

export class FakeRolloutCluster extends FakeCluster {
  declare readonly nodes: Map<string, RolloutNode>;
  readonly drains = new Map<string, FakeDrain>();
  /** What healthCheckNodes answers (default: passed). */
  healthy: (node: string) => boolean = () => true;

  /** Nodes by name → their partition label value (undefined: no label). */
  constructor(nodes: Record<string, string | undefined>, readonly partitionLabel = 'topology.kubernetes.io/zone') {
    super(Object.keys(nodes));
    for (const [name, zone] of Object.entries(nodes)) {
      const n = this.nodes.get(name)!;
      if (zone !== undefined) n.labels[partitionLabel] = zone;
      n.bootID = `boot-${name}-1`;
      n.ready = true;
      n.annotations = {};
      n.ip = '10.0.0.1';
      this.drains.set(name, new FakeDrain(name, [], { cordoned: true }));
    }
  }

  /** The node as the apiserver would give it (only what the rollout's activities read). */
  v1(name: string): V1Node | undefined {
    const n = this.nodes.get(name);
    if (!n) return undefined;
    return {
      metadata: { name, uid: n.uid ?? `uid-${name}`, labels: n.labels, annotations: n.annotations },
      status: { nodeInfo: { bootID: n.bootID ?? '' } as never, conditions: [{ type: 'Ready', status: n.ready ? 'True' : 'False' }], addresses: n.ip ? [{ type: 'InternalIP', address: n.ip }] : [] },
    };
  }

  rolloutSelection(ask: SelectionAsk = {}): Selection {
    const s = this.selection();
    const { partitionBy, holder } = ask;
    const partitions = partitionBy === undefined ? {} : { partitions: Object.fromEntries(s.nodes.map((n) => [n, this.nodes.get(n)!.labels[partitionBy] ?? ''])) };
    return { ...s, ...partitions, ...(holder === undefined ? {} : { elsewhere: this.elsewhere(holder) }) };
  }

  /** Who other than `holder` holds each node (as selectionOf reads the claim and held-by). */
  elsewhere(holder: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, n] of this.nodes) {
      const others = n.heldBy.filter((h) => h !== holder);
      if (n.claimedBy) out[name] = `CycleNodeRequest ${n.claimedBy}`;
      else if (others.length) out[name] = `NodeMaintenance ${others.join(', ')}`;
    }
    return out;
  }

  rolloutActivities() {
    const base = this.activities();
    const drainActs = new Map([...this.drains].map(([n, d]) => [n, d.activities() as unknown as Record<string, (...a: unknown[]) => unknown>]));
    const names = Object.keys(drainActs.values().next().value ?? {}).filter((k) => !['acquireDisruption', 'releaseDisruption', 'waitForDisruption', 'recordEvent'].includes(k));
    // Each drain activity goes to the FakeDrain of the node its workflow (nm-node/<node>/drain) drains.
    const routed = Object.fromEntries(
      names.map((k) => [k, (...args: unknown[]) => drainActs.get(Context.current().info.workflowExecution!.workflowId.split('/')[1]!)![k]!(...args)]),
    );
    return {
      ...routed,
      ...base,
      selectMaintenanceNodes: this.logged('selectMaintenanceNodes', async (i: SelectionAsk): Promise<Selection> => this.rolloutSelection(i)),
      watchMaintenanceSelection: this.logged('watchMaintenanceSelection', async (w: SelectionWatchInput) => {
        const differs = () => {
          const s = this.selection();
          const held = w.holder === undefined ? false : JSON.stringify(this.elsewhere(w.holder)) !== JSON.stringify(w.elsewhere ?? {});
          return s.totalNodes !== w.totalNodes || s.nodes.join() !== w.nodes.join() || held;
        };
        const changed = await until(differs, w.renewMs ?? 20 * 60_000);
        return { changed, selection: this.rolloutSelection(w) };
      }),
      readRolloutNode: this.logged('readRolloutNode', async (i: { node: string }) => nodeFacts(this.v1(i.node))),
      watchRolloutNode: this.logged('watchRolloutNode', async (w: RolloutWatchInput): Promise<RolloutWatchResult> => {
        let out: RolloutWatchResult = {};
        await until(() => {
          const done = workDone(this.v1(w.node), w);
          if (done) out = { done, ...(this.nodes.get(w.node)?.bootID ? { bootID: this.nodes.get(w.node)!.bootID } : {}) };
          return !!done;
        }, w.renewMs ?? 20 * 60_000);
        return out;
      }),
      healthCheckNodes: this.logged('healthCheckNodes', async (i: { nodes: Array<{ name: string }> }) => {
        const bad = i.nodes.filter((n) => !this.healthy(n.name)).map((n) => `${n.name}: GET http://check: status 500`);
        return { passed: !bad.length, failures: bad };
      }),
    };
  }
}
