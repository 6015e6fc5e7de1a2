// A rolling NodeMaintenance's invariants (docs/rolling-maintenance.md RM-7.2), judged from a watch of
// its Nodes (every version: cordoned, held by the maintenance, marked done), since the audit log
// records node writes at Metadata level (who and when, not what). `judgeRollout` is pure; the chaos
// runner (bench/chaos/rollout.ts) feeds it and `test/unit/rollout-invariants.test.ts` breaks each once.
import type { V1Node } from '@kubernetes/client-node';
import { HELD_BY_ANNOTATION } from '../api/node-maintenance.js';
import { ROLLOUT_DONE_ANNOTATION } from '../api/rollout.js';
import type { Kube } from '../kube/client.js';
import { RelistingWatch } from './relisting-watch.js';

export const ROLLOUT_INVARIANTS = {
  'rollout-within-limit': 'never more nodes cordoned at once than maxUnavailable (and the budget) allow',
  'rollout-started-once': 'no node held by the rollout, let go, then held again',
  'rollout-released-after-done': 'no node let go (uncordoned, or its hold removed) before its work was marked done',
  'rollout-nothing-held': 'nothing left cordoned or held by the maintenance once it is Complete',
} as const;
export type RolloutInvariantName = keyof typeof ROLLOUT_INVARIANTS;

/** One version of a node as the watch saw it. */
export interface NodeVersion {
  node: string;
  atMs: number;
  deleted: boolean;
  cordoned: boolean;
  /** Its held-by annotation names the maintenance. */
  held: boolean;
  /** The done annotation names the maintenance. */
  done: boolean;
}

export interface RolloutEvidence {
  versions: NodeVersion[];
  /** min(maxUnavailable, the budget's limit) in nodes. */
  limit: number;
  /** Nodes still cordoned or held once the maintenance is Complete. */
  leftAtEnd: string[];
}

export interface RolloutVerdict {
  name: RolloutInvariantName;
  ok: boolean;
  detail: string;
}

export function judgeRollout(ev: RolloutEvidence): RolloutVerdict[] {
  const out: RolloutVerdict[] = [];
  const verdict = (name: RolloutInvariantName, bad: string[], good: string) => out.push({ name, ok: !bad.length, detail: bad.length ? bad.slice(0, 4).join('; ') : good });
  const cordoned = new Set<string>();
  let most = 0;
  const over: string[] = [];
  const last = new Map<string, NodeVersion>();
  const letGo = new Set<string>();
  const again: string[] = [];
  const early: string[] = [];
  const doneSeen = new Set<string>();
  for (const v of ev.versions) {
    if (!v.deleted && v.cordoned) cordoned.add(v.node);
    else cordoned.delete(v.node);
    if (cordoned.size > ev.limit) over.push(`${[...cordoned].sort().join(', ')} cordoned at once (limit ${ev.limit})`);
    most = Math.max(most, cordoned.size);
    if (v.done) doneSeen.add(v.node);
    const was = last.get(v.node);
    const held = v.held && !v.deleted;
    if (held && letGo.has(v.node) && !was?.held) again.push(`${v.node} held again after its release`);
    if (was?.held && !held) {
      letGo.add(v.node);
      if (!doneSeen.has(v.node) && !v.deleted) early.push(`${v.node} let go before its work was marked done`);
    }
    last.set(v.node, v);
  }
  verdict('rollout-within-limit', [...new Set(over)], `at most ${most} of ${ev.limit} cordoned at once`);
  verdict('rollout-started-once', again, `${letGo.size} nodes held once each`);
  verdict('rollout-released-after-done', early, `${letGo.size} nodes let go after their work`);
  verdict('rollout-nothing-held', ev.leftAtEnd.map((n) => `${n} cordoned or held after Complete`), 'nothing held');
  return out;
}

/** Every version of the Nodes under `labelSelector`, as `NodeVersion`s for maintenance `name`. */
export class RolloutRecorder {
  readonly versions: NodeVersion[] = [];
  private readonly watch: RelistingWatch<V1Node>;

  constructor(kube: Kube, labelSelector: string, private readonly name: string) {
    this.watch = new RelistingWatch<V1Node>(kube, '/api/v1/nodes', labelSelector, () => kube.core.listNode({ labelSelector }), (items) => items.forEach((n) => this.see('ADDED', n)), (type, n) => this.see(type, n));
  }

  private see(type: string, n: V1Node): void {
    const a = n.metadata?.annotations ?? {};
    this.versions.push({
      node: n.metadata!.name!,
      atMs: Date.now(),
      deleted: type === 'DELETED',
      cordoned: n.spec?.unschedulable === true,
      held: (a[HELD_BY_ANNOTATION] ?? '').split(',').includes(this.name),
      done: a[ROLLOUT_DONE_ANNOTATION] === this.name,
    });
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  close(): void {
    this.watch.close();
  }
}
