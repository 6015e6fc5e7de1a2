// A pure simulation of intersecting NodeMaintenances over nodes with pods, driven by the planner
// (workflows/maintenance/targets.ts, progress.ts) the way the node coordinators and maintenance
// workflows use it: each round, every node computes its targets from its holders (plan), evicts the
// targeted pods that are not blocked (evict), then every maintenance advances (progress).
import { effectivePlan, reached, targeted, type Lane, type PlanEntry, type PodType } from '../../api/drain-plan.js';
import { advance, drainStatusMessage, firstNotReady, reachedDrainTargets, type ProgressNode } from '../../workflows/maintenance/progress.js';
import {
  fastForwardMessage,
  fastForwardedBy,
  limitedBy,
  limiting,
  nodeMessage,
  updateTargets,
  type FastForward,
  type Holder,
  type NodeTargetsState,
} from '../../workflows/maintenance/targets.js';
import { maintenanceWorkflowId } from '../../workflows/ids.js';

export interface SimPod {
  name: string;
  podType: PodType;
  priority: number;
  labels: Record<string, string>;
  /** Refused eviction (a PDB) while the round is below this. */
  blockedUntil?: number;
  /** DaemonSet or Static pod without an evacuator: never evicted, does not hold finished. */
  kept?: boolean;
}

export interface SimMaintenanceSpec {
  name: string;
  /** creationTimestamp order; defaults to the order given. */
  createdAt?: string;
  plan?: PlanEntry[];
  nodes: string[];
  /** Round at which it enters Cordon (optional) and Drain. */
  cordonAt?: number;
  drainAt: number;
  /** Nodes that start to match later (NM-2.6): node name → round. They join at the current targets (A5). */
  joins?: Record<string, number>;
}

export type SimStage = 'Idle' | 'Cordon' | 'Drain' | 'Complete';

export interface SimMaintenance {
  id: string;
  spec: SimMaintenanceSpec;
  createdAt: string;
  plan: PlanEntry[];
  index: number;
  stage: SimStage;
  /** Round at which it completed. */
  completedAt?: number;
}

export interface SimNode {
  name: string;
  pods: SimPod[];
  state?: NodeTargetsState;
  finished: boolean;
  gone: boolean;
}

export interface Eviction {
  round: number;
  node: string;
  pod: string;
  lanes: Lane[];
}

export interface SimStatusNode {
  name: string;
  drainTargets: Lane[];
  drainMessage: string;
  limitedBy: string[];
}

export class Sim {
  round = 0;
  readonly nodes = new Map<string, SimNode>();
  readonly ms: SimMaintenance[] = [];
  readonly evictions: Eviction[] = [];
  readonly fastForwards: Array<{ round: number; node: string; maintenance: string; ff: FastForward; message: string }> = [];
  /** Called after each node's targets are computed, before evictions. */
  onTargets?: (node: SimNode, prev: NodeTargetsState | undefined, holders: Holder[]) => void;

  constructor(nodes: Record<string, SimPod[]>, specs: SimMaintenanceSpec[]) {
    for (const [name, pods] of Object.entries(nodes)) this.nodes.set(name, { name, pods: [...pods], finished: false, gone: false });
    specs.forEach((spec, i) => {
      const createdAt = spec.createdAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      this.ms.push({ id: maintenanceWorkflowId({ name: spec.name, uid: `uid-${i}` }), spec, createdAt, plan: effectivePlan(spec.plan), index: 0, stage: 'Idle' });
    });
  }

  m(name: string): SimMaintenance {
    const m = this.ms.find((x) => x.spec.name === name);
    if (!m) throw new Error(`no maintenance ${name}`);
    return m;
  }

  node(name: string): SimNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  /** M's nodes at this round (members that have joined). */
  memberNodes(m: SimMaintenance): string[] {
    return m.spec.nodes.filter((n) => (m.spec.joins?.[n] ?? 0) <= this.round);
  }

  lanes(node: string): Lane[] {
    return this.node(node).state?.lanes ?? [];
  }

  holders(node: string): Holder[] {
    return this.ms
      .filter((m) => (m.stage === 'Cordon' || m.stage === 'Drain') && this.memberNodes(m).includes(node))
      .map((m) => ({ id: m.id, name: m.spec.name, createdAt: m.createdAt, stage: m.stage as 'Cordon' | 'Drain', plan: m.plan, index: m.index }));
  }

  /** Stage changes due at this round, then every node's targets. */
  plan(): void {
    for (const m of this.ms) {
      if (m.stage === 'Idle' && m.spec.cordonAt !== undefined && this.round >= m.spec.cordonAt) m.stage = 'Cordon';
      if ((m.stage === 'Idle' || m.stage === 'Cordon') && this.round >= m.spec.drainAt) m.stage = 'Drain';
    }
    for (const n of this.nodes.values()) {
      if (n.gone) continue;
      const holders = this.holders(n.name);
      const prev = n.state;
      const u = updateTargets(prev, holders);
      n.state = u.state;
      // A node is finished only for the targets it has now (the drain reports against targetsSeq).
      n.finished = !n.pods.some((p) => !p.kept && targeted(u.state.lanes, p));
      for (const ff of u.fastForwarded) {
        const h = holders.find((x) => x.id === ff.holder)!;
        this.fastForwards.push({ round: this.round, node: n.name, maintenance: h.name, ff, message: fastForwardMessage(n.name, ff, h) });
      }
      this.onTargets?.(n, prev, holders);
    }
  }

  /** Every targeted, unblocked, not-kept pod leaves; then finished(N) is computed. */
  evict(): void {
    for (const n of this.nodes.values()) {
      if (n.gone) continue;
      const t = this.lanes(n.name);
      const keep: SimPod[] = [];
      for (const p of n.pods) {
        if (!p.kept && targeted(t, p) && (p.blockedUntil ?? 0) <= this.round) this.evictions.push({ round: this.round, node: n.name, pod: p.name, lanes: t });
        else keep.push(p);
      }
      n.pods = keep;
      n.finished = !n.pods.some((p) => !p.kept && targeted(t, p));
    }
  }

  progressNodes(m: SimMaintenance): ProgressNode[] {
    return this.memberNodes(m).map((name) => {
      const n = this.node(name);
      return { name, lanes: n.state?.lanes ?? [], finished: n.finished, gone: n.gone };
    });
  }

  /** Maintenances advance (A3); one past its last entry with every node finished is Drained and completes. */
  progress(): void {
    for (const m of this.ms) {
      if (m.stage !== 'Drain') continue;
      const nodes = this.progressNodes(m);
      m.index = advance(m.plan, m.index, nodes);
      if (m.index >= m.plan.length && nodes.every((n) => n.gone || n.finished)) {
        m.stage = 'Complete';
        m.completedAt = this.round;
      }
    }
    this.round++;
  }

  step(): void {
    this.plan();
    this.evict();
    this.progress();
  }

  /** Rounds until every maintenance is Complete (or `max` rounds); returns the rounds run. */
  run(max: number): number {
    const start = this.round;
    while (this.round - start < max && this.ms.some((m) => m.stage !== 'Complete')) this.step();
    return this.round - start;
  }

  drained(m: SimMaintenance, node: string): boolean {
    const n = this.node(node);
    return m.stage === 'Complete' || (!!n.state?.final && n.finished && m.index >= m.plan.length);
  }

  /** nodeStatuses[] of M, as the maintenance workflow would compute them. */
  status(name: string): { nodeStatuses: SimStatusNode[]; reachedDrainTargets: Lane[]; drainMessage: string } {
    const m = this.m(name);
    const nodes = this.progressNodes(m);
    const nodeStatuses = this.memberNodes(m).map((nodeName): SimStatusNode => {
      const n = this.node(nodeName);
      const holders = this.holders(nodeName);
      const lanes = this.lanes(nodeName);
      const other = firstNotReady(m.plan, m.index, nodes, nodeName);
      const e = m.plan[m.index];
      return {
        name: nodeName,
        drainTargets: lanes,
        limitedBy: n.gone ? [] : limitedBy(holders, m.id, lanes),
        drainMessage: nodeMessage({
          maintenance: m.spec.name,
          gone: n.gone,
          drained: this.drained(m, nodeName),
          fastForwardedBy: fastForwardedBy(n.state, m.id),
          limiting: limiting(holders)?.name,
          finished: n.finished,
          reachedEntry: !e || reached(lanes, e),
          waitingForNode: other && { name: other.name, limitedBy: limitedBy(this.holders(other.name), m.id, this.lanes(other.name))[0] },
        }),
      };
    });
    const drained = m.stage === 'Complete' || this.memberNodes(m).every((x) => this.drained(m, x));
    return {
      nodeStatuses,
      reachedDrainTargets: reachedDrainTargets(nodes),
      drainMessage: drainStatusMessage(
        drained,
        nodeStatuses.map((s, i) => ({ finished: nodes[i]!.finished, gone: nodes[i]!.gone, limitedBy: s.limitedBy })),
      ),
    };
  }
}
