// Kubernetes Events, so `kubectl describe` shows what Slipway did to an object and why.
// Event names are derived from the action, so a retried activity updates nothing twice.
import { apiStatus, type Kube } from '../kube/client.js';
import { forcedActionRecorded } from './metrics.js';

export interface EventInput {
  involved: { kind: string; apiVersion: string; namespace?: string; name: string; uid?: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Stable per action: the retry of the same action hits 409 instead of writing a second Event. */
  dedupKey: string;
}

export const EVENT_SOURCE = 'slipway';

function eventName(i: EventInput): string {
  let h = 0;
  for (const c of i.dedupKey) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return `${i.involved.name.slice(0, 200)}.slipway-${h.toString(16)}`;
}

export function createEventActivities(kube: Kube) {
  return {
    async recordEvent(i: EventInput): Promise<void> {
      const namespace = i.involved.namespace ?? 'default';
      const now = new Date();
      try {
        await kube.core.createNamespacedEvent({
          namespace,
          body: {
            metadata: { name: eventName(i), namespace },
            involvedObject: { ...i.involved },
            type: i.type,
            reason: i.reason,
            message: i.message.slice(0, 1024),
            source: { component: EVENT_SOURCE },
            reportingComponent: EVENT_SOURCE,
            reportingInstance: EVENT_SOURCE,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        });
        forcedActionRecorded(i.reason); // after the create: a retry that hits 409 counts nothing twice
      } catch (err) {
        if (apiStatus(err) !== 409) throw err; // 409: this very event was already recorded
      }
    },
  };
}
