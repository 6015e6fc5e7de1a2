// The chaos judges' view of one collection: every version from a list, then a watch, listed again
// on any break (an apiserver outage is one of the faults), until close(). The loop itself is the
// product's one list-then-watch (kube/listwatch.ts); this only adapts it to a recorder.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Kube } from '../kube/client.js';
import { listWatch, type WatchEventType } from '../kube/listwatch.js';

export class RelistingWatch<T extends KubernetesObject> {
  private readonly stop = new AbortController();

  constructor(
    private readonly kube: Kube,
    private readonly path: string,
    private readonly labelSelector: string | undefined,
    private readonly list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
    private readonly onList: (items: T[]) => void,
    private readonly onEvent: (type: WatchEventType, o: T) => void,
  ) {}

  /** Resolves once the first list is in, so nothing the caller does next goes unseen. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      void listWatch<T>({
        kc: this.kube.config,
        path: this.path,
        labelSelector: this.labelSelector,
        list: async () => {
          const l = await this.list();
          return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
        },
        onList: (items) => {
          this.onList(items);
          resolve();
        },
        onEvent: (type, o) => this.onEvent(type, o),
        segmentMs: 300_000,
        segmentEndedBy: 'server',
        afterSegment: 'resume',
        listErrors: 'retry',
        backoff: { initialMs: 500, maxMs: 2_000 },
        signal: this.stop.signal,
      }).catch(reject);
    });
  }

  close(): void {
    this.stop.abort();
  }
}
