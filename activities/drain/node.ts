// Cordon and uncordon. Idempotent merge patches of spec.unschedulable; a missing node is reported,
// not an error (someone else may have removed it).
import { PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { apiStatus, type Kube } from '../kube.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The node, or undefined when it does not exist. */
export async function readNode(kube: Kube, name: string): Promise<V1Node | undefined> {
  try {
    return await kube.core.readNode({ name });
  } catch (err) {
    if (apiStatus(err) === 404) return undefined;
    throw err;
  }
}

/** The one place Slipway cordons and uncordons: the activities below, and re-attach when a cycle starts. */
export async function setUnschedulable(kube: Kube, name: string, value: boolean): Promise<{ exists: boolean; changed: boolean }> {
  try {
    const node = await kube.core.readNode({ name });
    if ((node.spec?.unschedulable === true) === value) return { exists: true, changed: false };
    await kube.core.patchNode({ name, body: { spec: { unschedulable: value ? true : null } } }, mergePatch);
    return { exists: true, changed: true };
  } catch (err) {
    if (apiStatus(err) === 404) return { exists: false, changed: false };
    throw err;
  }
}

export function createNodeActivities(kube: Kube) {
  return {
    async cordonNode(name: string) {
      return setUnschedulable(kube, name, true);
    },
    /** Healing's uncordon (the cycle request calls it for every node it puts back). */
    async uncordonNode(name: string) {
      return setUnschedulable(kube, name, false);
    },
  };
}
