// The rollout's two updates (workflows/messages.ts): the operator's word that a node's work is done
// (RM-3.4), and pause/resume (RM-5). Validators refuse in one line, leaving no trace in history.
import { setHandler } from '@temporalio/workflow';
import { rolloutNodeDoneUpdate, setRolloutPausedUpdate } from '../../messages.js';
import type { Maintenance } from '../maintenance.js';
import { rolloutRecord } from './engine.js';
import { rolloutPhase } from './record.js';

const NO_ROLLOUT = 'this maintenance has no spec.rollout';


export function listenRollout(m: Maintenance): void {
  setHandler(
    rolloutNodeDoneUpdate,
    ({ node, requestedBy }) => {
      const n = m.rollout!.nodes[node]!;
      n.workDone = requestedBy ? `manual, by ${requestedBy}` : 'manual';
      m.dirty = true;
      // The loop releases it next (the handler does not wait for that: a renewal waits for handlers).
      return { node, phase: 'Verifying' as const };
    },
    {
      validator: ({ node }) => {
        if (!m.spec.rollout) throw new Error(NO_ROLLOUT);
        const n = m.rollout?.nodes[node];
        if (!n || !m.nodes.has(node)) throw new Error(`node ${node} is not in this maintenance`);
        if (n.phase !== 'AwaitingWork') throw new Error(`node ${node} is ${n.phase}, not AwaitingWork`);
      },
    },
  );
  setHandler(
    setRolloutPausedUpdate,
    ({ paused, requestedBy }) => {
      const r = rolloutRecord(m);
      r.paused = paused;
      r.pausedBy = paused ? requestedBy : undefined;
      m.dirty = true;
      return { phase: rolloutPhase(m) };
    },
    {
      validator: (_ask: { paused: boolean; requestedBy?: string }) => {
        if (!m.spec.rollout) throw new Error(NO_ROLLOUT);
        if (m.completed || m.stage === 'Complete' || m.deleting) throw new Error('maintenance is complete');
      },
    },
  );
}
