// The NodeGroup kind for one leadership term: its controller and its reconciler, which keeps each
// drift observer running and wakes it when its NodeGroup changes.
import { NODE_GROUP } from '../../../api/node-group-kind.js';
import type { BridgeOptions } from '../bridge.js';
import { clusterCollection, kindController } from '../kit.js';
import { NodeGroupReconciler, type NodeGroupKubeObject } from './reconciler.js';

export function nodeGroupTerm(o: BridgeOptions) {
  const controller = kindController('NodeGroup', o.kube.config, o);
  const groups = controller.watchPrimary<NodeGroupKubeObject>(clusterCollection(o.kube.config, NODE_GROUP));
  const reconciler = new NodeGroupReconciler({ groups, client: o.client, taskQueue: o.taskQueue, isLeader: o.isLeader, log: o.log });
  return { controller, reconciler, groups };
}
