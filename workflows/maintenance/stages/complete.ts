// Complete: every node released (uncordoned unless held by another or cordoned before), then the end.
import { condition } from '@temporalio/workflow';
import type { Maintenance, Next } from '../maintenance.js';
import { release } from './members.js';
import { stopWatching } from './hold.js';
import { holds } from '../rollout/engine.js';
import { stopRolling } from '../rollout/effects.js';

/** Complete sends its releases again this often while a coordinator has not acknowledged one. */
const RELEASE_RETRY_MS = 10_000;

export async function complete(m: Maintenance): Promise<Next> {
  stopWatching(m);
  stopRolling(m);
  for (const n of m.nodes.keys()) if (holds(m, n)) m.releasing.add(n); // RM-6.3: a rollout releases what it still holds
  while (m.releasing.size) {
    for (const n of m.releasing) await release(m, n);
    m.publish();
    await condition(() => m.releasing.size === 0, RELEASE_RETRY_MS);
  }
  m.completed = true;
  return 'End';
}
