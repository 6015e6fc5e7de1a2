// Scripted stand-ins for the NodeMaintenance activities (activities/maintenance/*), for workflow
// tests: a set of nodes with the maintenance state the node coordinators write, an object with its
// finalizer and spec.stage. Each answer follows the real activity's contract; every call is logged.
import type { HoldInput, HoldResult } from '../../activities/maintenance/node-state.js';
import type { Selection } from '../../activities/maintenance/select.js';
import type { PreviewInput, PreviewResult } from '../../activities/maintenance/preview.js';
import { nodePreview } from '../../activities/maintenance/preview-plan.js';
import type { NodePreview } from '../../workflows/maintenance/types.js';
import type { EventInput } from '../../activities/events.js';
import { CallLog } from './scripted.js';

export interface FakeNode {
  labels: Record<string, string>;
  cordoned: boolean;
  heldBy: string[];
  wasUnschedulable?: boolean;
  state?: string;
}

export class FakeCluster extends CallLog {
  readonly nodes = new Map<string, FakeNode>();
  /** Nodes in the cluster that the test's selector does not take (for "selects every node"). */
  others = 1;
  finalizer = false;
  stage = 'Idle';
  generation = 1;
  readonly events: EventInput[] = [];
  /** What previewMaintenance answers per node (default: a node with no pods). */
  readonly previews = new Map<string, NodePreview>();
  /** Awaited by every node write before it applies (a test holds a write in flight with it). */
  beforeNodeWrite: (i: HoldInput) => Promise<void> = async () => undefined;

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

  activities() {
    return {
      selectMaintenanceNodes: this.logged('selectMaintenanceNodes', async (): Promise<Selection> => {
        const nodes = [...this.nodes.keys()].sort();
        return { nodes, totalNodes: nodes.length + this.others, controlPlaneNodes: 0, controlPlaneSelected: 0 };
      }),
      previewMaintenance: this.logged('previewMaintenance', async (i: PreviewInput): Promise<PreviewResult> => {
        const nodes = i.nodes.map((node) => this.previews.get(node) ?? nodePreview({ node, exists: true, plan: i.plan, verdicts: [], pods: [], pdbs: [], errors: [] }));
        const digest = JSON.stringify(nodes);
        return digest === i.previous ? { digest, unchanged: true } : { digest, nodes };
      }),
      ensureMaintenanceFinalizer: this.logged('ensureMaintenanceFinalizer', async () => {
        this.finalizer = true;
        return true;
      }),
      writeMaintenanceStage: this.logged('writeMaintenanceStage', async (i: { stage: string }) => {
        if (i.stage !== 'Idle') this.finalizer = true;
        if (this.stage !== i.stage) this.generation++;
        this.stage = i.stage;
        return { generation: this.generation, exists: true };
      }),
      writeMaintenanceNodeState: this.logged('writeMaintenanceNodeState', async (i: HoldInput): Promise<HoldResult> => {
        await this.beforeNodeWrite(i);
        const n = this.nodes.get(i.node);
        if (!n) return { exists: false, reverted: false };
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
      }),
      recordEvent: this.logged('recordEvent', async (e: EventInput) => {
        this.events.push(e);
      }),
    };
  }
}
