// Fixtures for the bridge's NodeMaintenance tests on the local stack: NodeMaintenances (cluster-scoped,
// so each test names them uniquely and removes them after), their Events (in the default namespace),
// and the scripted maintenance workflow (test/support/workflows/scripted-maintenance.ts).
import { fileURLToPath } from 'node:url';
import type { CoreV1Event } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { MAINTENANCE_RESOURCE, type NodeMaintenanceObject } from '../../starter/bridge/maintenance/objects.js';
import { maintenanceObjectAttr } from '../../workflows/ids.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import type { BridgeFixture } from './bridge.js';
import { mergePatch } from '../../kube/patch.js';
import { API_VERSION } from '../../api/names.js';

export const scriptedMaintenancePath = () => fileURLToPath(new URL('./workflows/scripted-maintenance.ts', import.meta.url));

/** A selector that matches no node on the stack: the scripted workflow touches none anyway. */
export const noNodes = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/it-bridge-maintenance', operator: 'In', values: ['none'] }] }] };

export class Maintenances {
  private readonly names = new Set<string>();

  constructor(private readonly f: BridgeFixture) {}

  async create(name: string, spec: unknown, annotations?: Record<string, string>): Promise<NodeMaintenanceObject> {
    this.names.add(name);
    const body = { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name, annotations }, spec };
    return (await this.f.custom.createClusterCustomObject({ ...MAINTENANCE_RESOURCE, body })) as NodeMaintenanceObject;
  }

  async get(name: string): Promise<NodeMaintenanceObject | undefined> {
    try {
      const o = (await this.f.custom.getClusterCustomObject({ ...MAINTENANCE_RESOURCE, name })) as NodeMaintenanceObject;
      if (o.status?.workflowId) this.f.track(o.status.workflowId);
      return o;
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  }

  async patch(name: string, body: object): Promise<NodeMaintenanceObject> {
    return (await this.f.custom.patchClusterCustomObject({ ...MAINTENANCE_RESOURCE, name, body }, mergePatch)) as NodeMaintenanceObject;
  }

  async delete(name: string): Promise<void> {
    await this.f.custom.deleteClusterCustomObject({ ...MAINTENANCE_RESOURCE, name });
  }

  /** Events on the maintenance (cluster-scoped objects' Events live in the default namespace). */
  async events(name: string, uid?: string): Promise<CoreV1Event[]> {
    const l = await this.f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name},involvedObject.kind=${NODE_MAINTENANCE.kind}` });
    return l.items.filter((e) => !uid || e.involvedObject.uid === uid);
  }

  /** Workflow IDs Temporal has for the maintenance of this name (any run, any state). */
  async workflows(name: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const w of this.f.client.workflow.list({ query: `SlipwayObject = '${maintenanceObjectAttr(name)}'` })) ids.push(`${w.workflowId}#${w.runId}`);
    return ids;
  }

  /** Removes every maintenance this fixture created (finalizers first). */
  async cleanup(): Promise<void> {
    for (const name of this.names) {
      const o = await this.get(name).catch(() => undefined);
      if (!o) continue;
      if (o.metadata.finalizers?.length) await this.patch(name, { metadata: { finalizers: null } }).catch(() => undefined);
      await this.delete(name).catch(() => undefined);
    }
  }
}
