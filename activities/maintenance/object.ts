// Writes to the NodeMaintenance object itself: the finalizer (before the first node write, NM-2.3)
// and spec.stage (with spec.reason, when given) from the setStage update (NM-2.15). Read-modify-write with the object's
// resourceVersion, re-read on conflict; a recreated object (another uid) is never touched.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { MAINTENANCE_FINALIZER, NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { failpoint } from '../../shared/failpoint.js';

interface MaintenanceObject {
  metadata: { name: string; uid: string; resourceVersion: string; generation?: number; finalizers?: string[]; deletionTimestamp?: string };
  spec: { stage?: string; [k: string]: unknown };
}

export interface ObjectRef {
  name: string;
  uid: string;
}

export function createMaintenanceObjectActivities(kube: Kube) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  const where = (name: string) => ({ group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name });

  /** Applies `change` to the current object until the write goes through; undefined: the object (this uid) is gone. */
  async function update(ref: ObjectRef, change: (o: MaintenanceObject) => boolean): Promise<MaintenanceObject | undefined> {
    for (let attempt = 0; ; attempt++) {
      let o: MaintenanceObject;
      try {
        o = (await api.getClusterCustomObject(where(ref.name))) as MaintenanceObject;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        throw err;
      }
      if (o.metadata.uid !== ref.uid) return undefined;
      if (!change(o)) return o;
      try {
        return (await api.replaceClusterCustomObject({ ...where(ref.name), body: o })) as MaintenanceObject;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        if (apiStatus(err) !== 409 || attempt > 20) throw err;
      }
    }
  }

  const addFinalizer = (o: MaintenanceObject): boolean => {
    if (o.metadata.deletionTimestamp) return false; // a deleting object takes no new finalizer
    const f = o.metadata.finalizers ?? [];
    if (f.includes(MAINTENANCE_FINALIZER)) return false;
    o.metadata.finalizers = [...f, MAINTENANCE_FINALIZER];
    return true;
  };

  return {
    /** Idempotent. False when the object is gone or being deleted without it (then nothing may be written). */
    async ensureMaintenanceFinalizer(ref: ObjectRef): Promise<boolean> {
      const o = await update(ref, addFinalizer);
      const has = !!o && (o.metadata.finalizers ?? []).includes(MAINTENANCE_FINALIZER);
      if (has) failpoint('worker.maintenance.after-finalizer');
      return has;
    },
    /** Writes spec.stage and spec.reason when given (and the finalizer when leaving Idle) for setStage; answers the generation written. */
    async writeMaintenanceStage(input: ObjectRef & { stage: string; reason?: string }): Promise<{ generation?: number; exists: boolean }> {
      const o = await update(input, (obj) => {
        let changed = false;
        if (input.stage !== 'Idle') changed = addFinalizer(obj) || changed;
        if (obj.spec.stage !== input.stage) {
          obj.spec.stage = input.stage;
          changed = true;
        }
        if (input.reason !== undefined && obj.spec.reason !== input.reason) {
          obj.spec.reason = input.reason;
          changed = true;
        }
        return changed;
      });
      return { generation: o?.metadata.generation, exists: !!o };
    },
  };
}
