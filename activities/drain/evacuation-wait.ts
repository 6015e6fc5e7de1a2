// The drain's look at evacuating pods without a poll (issue 26: idle costs nothing): the wave wait
// (wave-wait.ts) also watches the Evacuations of the pods an evacuator has in hand and ends when one
// of them calls for a step the drain's last pass did not take: the evacuator withdrew (completed)
// or another became active, the drain fell back to eviction, the object went. An evacuator's
// progress alone (its heartbeats) does not end it: the deadline it moves is the wave wait's window
// (workflows/drain/evacuations.ts), and the pass at that time reads it again.
import { API_VERSION } from '../../api/names.js';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { EVACUATION } from '../../api/evacuation.js';
import { nextEvacuationStep } from '../../shared/evacuation.js';
import type { Kube } from '../../kube/client.js';
import { watchUntil } from '../../kube/watch.js';
import type { EvacuationObject } from './evacuation.js';

export interface EvacuationWaitInput {
  /** Each evacuating pod's Evacuation (the pod's namespace, its uid) and the evacuator the last pass saw in control. */
  evacuations: Array<{ namespace: string; name: string; evacuator: string }>;
  timeoutMs: number;
}

/** Why the Evacuation calls for another step than waiting on `evacuator` (undefined: it does not). */
export function evacuationChange(o: EvacuationObject | undefined, evacuator: string, nowMs: number): string | undefined {
  if (!o) return 'deleted';
  const step = nextEvacuationStep(o, { exists: true }, nowMs);
  if (step.kind === 'wait' && step.name === evacuator) return undefined;
  return step.kind === 'wait' ? `${step.name} in control` : step.kind;
}

/** Resolves when one of the Evacuations calls for another step ({ met: true }), or at the end of the window. */
export function untilEvacuationChange(kube: Kube, input: EvacuationWaitInput & { signal?: AbortSignal }): Promise<{ met: boolean }> {
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  return watchUntil<KubernetesObject>({
    kc: kube.config,
    path: `/apis/${API_VERSION}/evacuations`, // this form: the RBAC test reads watched paths from the code
    list: async () => {
      const l = (await custom.listClusterCustomObject({ group: EVACUATION.group, version: EVACUATION.version, plural: EVACUATION.plural })) as { items: KubernetesObject[]; metadata?: { resourceVersion?: string } };
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    done: (objects) => {
      const byName = new Map([...objects.values()].map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o as unknown as EvacuationObject]));
      return input.evacuations.some((e) => evacuationChange(byName.get(`${e.namespace}/${e.name}`), e.evacuator, Date.now()) !== undefined);
    },
    timeoutMs: input.timeoutMs,
    segmentMs: 5 * 60_000,
    signal: input.signal,
  });
}
