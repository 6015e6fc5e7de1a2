// The drift observer's one pass (an activity): read the NodeGroup, ask its provider which instances
// drifted, read the Nodes and the requests, decide (plan.ts), then create the request, record the
// Event and write the status. Idempotent: the request's and the Event's names come from the drift,
// so a retry after a crash at any line finds them made (409) and writes the same status.
import { nodeGroupsOf } from '../../api/cycle-node-request.js';
import { selectorToString } from '../../api/label-selector.js';
import { NODE_GROUP, NodeGroupSpec, observerDisabled } from '../../api/node-group-kind.js';
import { parseDuration } from '../../api/duration.js';
import { lastFiring, parseCron } from '../../shared/disruption-budget.js';
import { createEventActivities } from '../events.js';
import type { Kube } from '../../kube/client.js';
import type { DriftedInstance, NodeGroupProvider } from '../providers/types.js';
import { nodeGroupObjects } from './object.js';
import { planDriftPass, specError, type PassRequest } from './plan.js';
import { cycleRequests } from './requests.js';
import { API_VERSION } from '../../api/names.js';

export interface ObserveInput {
  name: string;
  uid: string;
}

export type ObserveResult =
  /** The object is gone, or no longer asks for an observer: the workflow ends. */
  | { gone: true }
  | { gone: false; intervalMs: number; message: string; created?: string; drifted: number };

/** The observer's schedule window at `now`, if it has a schedule. */
export function windowOf(o: { schedule?: string; duration?: string } | undefined, now: Date): { open: boolean; text: string } | undefined {
  if (!o?.schedule || !o.duration) return undefined;
  return { open: lastFiring(parseCron(o.schedule), now.getTime(), parseDuration(o.duration)) !== undefined, text: `"${o.schedule}" UTC for ${o.duration}` };
}

/** Default look interval when the spec cannot say (an invalid NodeGroup is looked at again this often). */
const FALLBACK_INTERVAL_MS = 5 * 60_000;

export function createNodeGroupActivities(kube: Kube, providers: Record<string, NodeGroupProvider>, defaultProvider: string) {
  const objects = nodeGroupObjects(kube);
  const requestsApi = cycleRequests(kube);
  const { recordEvent } = createEventActivities(kube);

  return {
    async observeNodeGroup(input: ObserveInput): Promise<ObserveResult> {
      const o = await objects.read(input.name);
      if (!o || o.metadata.uid !== input.uid) return { gone: true };
      // No observer asked for any more (driftObserver removed): this one ends; the bridge starts another if it comes back.
      if ((o.spec as { driftObserver?: unknown } | undefined)?.driftObserver === undefined) return { gone: true };
      const parsed = NodeGroupSpec.safeParse(o.spec ?? {});
      const spec = parsed.success
        ? { ok: true as const, value: parsed.data, input: o.spec as { template: NodeGroupSpec['template'] } }
        : { ok: false as const, error: specError(parsed.error) };
      const disabled = observerDisabled(o);
      let drift: Array<{ group: string; instances?: DriftedInstance[]; error?: string }> = [];
      let nodes: Array<{ name: string; providerID?: string; labels?: Record<string, string> }> = [];
      let requests: PassRequest[] = [];
      if (spec.ok) {
        const template = spec.value.template;
        const provider = providers[template.provider ?? defaultProvider];
        drift = await Promise.all(
          nodeGroupsOf(template).map(async (group) => {
            if (!provider) return { group, error: `no provider ${template.provider ?? defaultProvider}` };
            try {
              return { group, instances: await provider.driftedInstances(group) };
            } catch (err) {
              if ((err as Error).name === 'UnknownNodeGroupError') return { group, error: (err as Error).message };
              throw err; // transient: the activity is retried
            }
          }),
        );
        nodes = (await kube.core.listNode({ labelSelector: selectorToString(template.selector) })).items.map((n) => ({ name: n.metadata!.name!, providerID: n.spec?.providerID, labels: n.metadata?.labels }));
        requests = await requestsApi.list(input.name);
      }
      const now = new Date();
      const plan = planDriftPass({ name: input.name, uid: input.uid, generation: o.metadata.generation, spec, disabled, drift, nodes, requests, status: o.status, now, window: spec.ok ? windowOf(spec.value.driftObserver, now) : undefined });

      if (plan.create && spec.ok) await requestsApi.create(input.name, spec.value.requestNamespace, plan.create.name, plan.create.spec);
      if (plan.event) {
        await recordEvent({ involved: { kind: NODE_GROUP.kind, apiVersion: API_VERSION, name: input.name, uid: input.uid }, ...plan.event });
      }
      if (!(await objects.writeStatus(input.name, plan.status))) return { gone: true };
      return {
        gone: false,
        intervalMs: spec.ok && spec.value.driftObserver ? parseDuration(spec.value.driftObserver.interval) : FALLBACK_INTERVAL_MS,
        message: plan.status.message ?? '',
        created: plan.create ? `${spec.ok ? spec.value.requestNamespace : ''}/${plan.create.name}` : undefined,
        drifted: plan.status.driftedNodes?.length ?? 0,
      };
    },
  };
}
