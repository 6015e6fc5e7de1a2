// Cordon and uncordon. Idempotent merge patches of spec.unschedulable; a missing node is reported,
// not an error (someone else may have removed it).
import type { V1Node } from '@kubernetes/client-node';
import { maintenanceRequiredLabel, requiredComponents } from '../../api/dependency-locks.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { failpoint } from '../../shared/failpoint.js';
import { currentDrainCaller } from './caller.js';
import { freshNode } from '../node-cache.js';
import { mergePatch } from '../../kube/patch.js';

/** Ready is Unknown: the kubelet stopped posting status (the node lifecycle controller's mark), so its pods can never finish leaving. */
export function isUnreachable(node: V1Node | undefined): boolean {
  return node?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'Unknown';
}

/** The one place Slipway cordons and uncordons: the activities below, and re-attach when a cycle starts. */
export async function setUnschedulable(kube: Kube, name: string, value: boolean): Promise<{ exists: boolean; changed: boolean }> {
  try {
    const node = await freshNode(kube, name); // once per drain, and a stale "already cordoned" would be a lie
    if (!node) return { exists: false, changed: false };
    if ((node.spec?.unschedulable === true) === value) return { exists: true, changed: false };
    await kube.core.patchNode({ name, body: { spec: { unschedulable: value ? true : null } } }, mergePatch);
    return { exists: true, changed: true };
  } catch (err) {
    if (apiStatus(err) === 404) return { exists: false, changed: false };
    throw err;
  }
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * The patch that makes the node's maintenance-required labels exactly `components` (NM-5.10), or
 * undefined when they are already. A component that cannot be a label name is left out (the drain's
 * warnings name it): the label is a signal to other operators, the hold itself does not depend on it.
 */
export function maintenanceRequiredPatch(labels: Record<string, string> | undefined, components: string[]): Record<string, string | null> | undefined {
  const wanted = new Set(components.filter((c) => LABEL_NAME.test(c)));
  const out: Record<string, string | null> = {};
  for (const c of requiredComponents(labels)) if (!wanted.has(c)) out[maintenanceRequiredLabel(c)] = null;
  for (const c of wanted) if (labels?.[maintenanceRequiredLabel(c)] !== 'true') out[maintenanceRequiredLabel(c)] = 'true';
  return Object.keys(out).length ? out : undefined;
}

export function createNodeActivities(kube: Kube) {
  return {
    async cordonNode(name: string) {
      const r = await setUnschedulable(kube, name, true);
      if (currentDrainCaller() === 'cli') failpoint('worker.cli-drain.after-cordon');
      else failpoint('worker.drain.after-cordon');
      return r;
    },
    /** Sets the node's maintenance-required labels to exactly these components; idempotent, a missing node is not an error. */
    async setMaintenanceRequired(input: { nodeName: string; components: string[] }): Promise<{ exists: boolean }> {
      const node = await freshNode(kube, input.nodeName); // a stale copy could skip a label that must go (NM-5.10)
      if (!node) return { exists: false };
      const labels = maintenanceRequiredPatch(node.metadata?.labels, input.components);
      if (!labels) return { exists: true };
      try {
        await kube.core.patchNode({ name: input.nodeName, body: { metadata: { labels } } }, mergePatch);
      } catch (err) {
        if (apiStatus(err) === 404) return { exists: false };
        throw err;
      }
      return { exists: true };
    },
    /** Healing's uncordon (the cycle request calls it for every node it puts back). */
    async uncordonNode(name: string) {
      return setUnschedulable(kube, name, false);
    },
  };
}
