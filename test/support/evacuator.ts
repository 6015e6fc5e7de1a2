// A tiny example evacuator (spec §5, KEP-4563), for the tests and the docs: it finds the Evacuations
// that name it active (label evacuator.slipway.dev/active=<name>), heartbeats in its own status entry
// (server-side serverSideApply under its own field manager, so Slipway's writes and other evacuators' entries
// stay), "migrates" for a while, starts a replacement elsewhere if asked, then deletes the pod.
// A silent evacuator needs no code: register the annotation and run nothing.
import { CustomObjectsApi, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { ACTIVE_EVACUATOR_LABEL, EVACUATION } from '../../api/evacuation.js';
import type { EvacuationObject } from '../../activities/drain/evacuation.js';
import type { Kube } from '../../kube/client.js';
import { serverSideApply } from '../../kube/patch.js';
import { API_VERSION } from '../../api/names.js';

export interface EvacuatorOptions {
  name: string;
  namespace: string;
  /** Heartbeat every this long. */
  heartbeatMs: number;
  /** Migration time: the pod is deleted this long after activation. */
  workMs: number;
  /** Makes the replacement before the pod goes (e.g. a pod on another node). */
  replace?: (pod: V1Pod) => Promise<void>;
}

export class ExampleEvacuator {
  private stopped = false;
  private readonly api: CustomObjectsApi;
  private readonly started = new Map<string, number>();
  /** Heartbeats written, per Evacuation (the tests read them). */
  readonly heartbeats = new Map<string, number>();
  private loop?: Promise<void>;

  constructor(private readonly kube: Kube & { config: KubeConfig }, private readonly o: EvacuatorOptions) {
    this.api = kube.config.makeApiClient(CustomObjectsApi);
  }

  start(): this {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.tick().catch(() => undefined); // a failed round is tried again at the next
        await new Promise((r) => setTimeout(r, Math.min(this.o.heartbeatMs, 500)));
      }
    })();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async tick(): Promise<void> {
    const { group, version, plural, kind } = EVACUATION;
    const list = (await this.api.listNamespacedCustomObject({ group, version, plural, namespace: this.o.namespace, labelSelector: `${ACTIVE_EVACUATOR_LABEL}=${this.o.name}` })) as { items: EvacuationObject[] };
    for (const e of list.items) {
      const since = this.started.get(e.metadata.name) ?? Date.now();
      this.started.set(e.metadata.name, since);
      const pod = e.spec.podRef;
      if (Date.now() - since >= this.o.workMs) {
        const live = await this.kube.core.readNamespacedPod({ namespace: this.o.namespace, name: pod.name }).catch(() => undefined);
        if (live?.metadata?.uid === pod.uid) {
          await this.o.replace?.(live);
          await this.kube.core.deleteNamespacedPod({ namespace: this.o.namespace, name: pod.name, body: { preconditions: { uid: pod.uid } } });
        }
        continue;
      }
      const last = this.heartbeats.has(e.metadata.name) ? (e.status?.evacuators ?? []).find((x) => x.name === this.o.name)?.heartbeatTime : undefined;
      if (last && Date.now() - Date.parse(last) < this.o.heartbeatMs) continue;
      const body = {
        apiVersion: API_VERSION,
        kind,
        metadata: { name: e.metadata.name, namespace: this.o.namespace },
        status: { evacuators: [{ name: this.o.name, heartbeatTime: new Date().toISOString(), message: `migrating ${pod.name} (${Math.round((Date.now() - since) / 1000)}s)` }] },
      };
      await this.api.patchNamespacedCustomObjectStatus({ group, version, plural, namespace: this.o.namespace, name: e.metadata.name, body, fieldManager: `evacuator-${this.o.name}`, force: true }, serverSideApply);
      this.heartbeats.set(e.metadata.name, (this.heartbeats.get(e.metadata.name) ?? 0) + 1);
    }
  }
}
