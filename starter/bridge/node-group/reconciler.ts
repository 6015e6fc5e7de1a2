// The bridge's NodeGroup kind: one drift observer workflow (ng/<name>/<uid>) per NodeGroup that asks
// for one (spec.driftObserver). The observer does its own reading and status writing (it is the
// one that knows what it found); the bridge only keeps it running and wakes it when the object
// changes, or is deleted (it then ends at once instead of at the end of its interval).
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { DRIFT_OBSERVER_ANNOTATION } from '../../../api/node-group-kind.js';
import { nodeGroupObjectAttr, nodeGroupObserverWorkflowId } from '../../../workflows/ids.js';
import { observeNowSignal } from '../../../workflows/messages.js';
import { ObjectAttr } from '../../../workflows/search-attributes.js';
import type { ObjectCache } from '../../../kube/controller/cache.js';
import { NotLeaderError } from '../kit.js';
import type { Log } from '../../../shared/log.js';

export const NODE_GROUP_OBSERVER_TYPE = 'nodeGroupObserverWorkflow';

export interface NodeGroupKubeObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; uid: string };
  spec?: { driftObserver?: unknown };
}

/** What a change of the object is, as far as the observer cares: its spec and its opt-out annotation. */
const seenAs = (o: NodeGroupKubeObject) => `${o.metadata.generation ?? 0}/${o.metadata.annotations?.[DRIFT_OBSERVER_ANNOTATION] ?? ''}`;

export class NodeGroupReconciler {
  /** name → uid and the version of the object the observer last woke for (this term). */
  private readonly seen = new Map<string, { uid: string; as: string }>();

  constructor(
    private readonly o: { groups: ObjectCache<NodeGroupKubeObject>; client: Client; taskQueue: string; isLeader: () => boolean; log: Log },
  ) {}

  async reconcile(key: string): Promise<void> {
    if (!this.o.isLeader()) throw new NotLeaderError();
    const name = key.replace(/^\//, '');
    const obj = this.o.groups.get(key);
    const last = this.seen.get(name);
    if (!obj || (last && last.uid !== obj.metadata.uid)) {
      // Deleted (or recreated): wake the old observer, which finds its object gone and ends.
      if (last) await this.wake(nodeGroupObserverWorkflowId({ name, uid: last.uid }));
      this.seen.delete(name);
      if (!obj) return;
    }
    const as = seenAs(obj);
    if (this.seen.get(name)?.as === as) return;
    const workflowId = nodeGroupObserverWorkflowId({ name, uid: obj.metadata.uid });
    if (!obj.spec?.driftObserver) {
      // No observer asked for (any more): wake a running one, which ends at that pass.
      await this.wake(workflowId);
      this.seen.set(name, { uid: obj.metadata.uid, as });
      return;
    }
    // Starts the observer, or wakes the running one: either way it looks at the object now.
    await this.o.client.workflow.signalWithStart(NODE_GROUP_OBSERVER_TYPE, {
      workflowId,
      taskQueue: this.o.taskQueue,
      args: [{ name, uid: obj.metadata.uid }],
      signal: observeNowSignal,
      signalArgs: [],
      typedSearchAttributes: [{ key: ObjectAttr, value: nodeGroupObjectAttr(name) }],
      staticSummary: `drift observer of NodeGroup ${name}`,
    });
    if (!last) this.o.log(`NodeGroup ${name}: drift observer ${workflowId} running`, { kind: 'NodeGroup', name, workflowId });
    this.seen.set(name, { uid: obj.metadata.uid, as });
  }

  private async wake(workflowId: string): Promise<void> {
    try {
      await this.o.client.workflow.getHandle(workflowId).signal(observeNowSignal);
    } catch {
      // not running: nothing to wake
    }
  }
}
