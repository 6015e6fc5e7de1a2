// A controller runs only while its replica leads: a new one for each leadership term, built when
// the Lease is won and stopped when it is lost. A previous term's finishes stopping before the next
// starts, so two never run in one process.
import { LeaderElector, type LeaderElectorOptions } from './leader.js';
import type { Log } from '../../shared/log.js';

/** What runs for one term. */
export interface Term {
  start(): void;
  stop(): Promise<void>;
  /** Its caches hold full lists (default: at once). */
  isSynced?(): boolean;
}

export interface WhileLeadingOptions extends Omit<LeaderElectorOptions, 'onStartedLeading' | 'onStoppedLeading'> {
  /** Builds the term's controller; `isLeader` is to be checked before every write. */
  newTerm: (isLeader: () => boolean) => Term;
  log: Log;
  onStarted?: () => void;
}

export interface Leading {
  readonly identity: string;
  isLeader(): boolean;
  /**
   * Ready to serve: a replica that does not lead is ready once it is electing (it stands by); the
   * leader once its term's caches are synced (before that it would act on partial lists).
   */
  readiness(): { ready: boolean; reason: string };
  /** Stops electing and the running term (the lease is released for the next replica). */
  stop(): Promise<void>;
}

export function runWhileLeading(o: WhileLeadingOptions): Leading {
  const { newTerm, onStarted, ...electorOptions } = o;
  let term: Term | undefined;
  let stopping: Promise<void> = Promise.resolve();
  const elector: LeaderElector = new LeaderElector({
    ...electorOptions,
    onStartedLeading: () => {
      void stopping.then(() => {
        if (!elector.isLeader() || term) return;
        term = newTerm(() => elector.isLeader());
        term.start();
        onStarted?.();
      });
    },
    onStoppedLeading: async (reason) => {
      const t = term;
      term = undefined;
      if (!t) return;
      stopping = t.stop();
      await stopping;
      o.log(`stopped reconciling (${reason})`);
    },
  });
  elector.start();
  return {
    identity: elector.identity,
    isLeader: () => elector.isLeader(),
    readiness: () => {
      if (!elector.isLeader()) return { ready: true, reason: 'standing by: not the leader' };
      if (!term) return { ready: false, reason: 'leading: starting the controllers' };
      return term.isSynced?.() === false ? { ready: false, reason: 'leading: caches not synced yet' } : { ready: true, reason: 'leading: caches synced, reconciling' };
    },
    async stop() {
      await elector.stop();
      await term?.stop();
      await stopping;
    },
  };
}
