// An in-memory NodeDisruptionBudget for workflow tests: acquireDisruption / releaseDisruption as the
// ledger answers them (activities/budget/: a node already disrupted costs no slot, re-acquiring what
// one holds is granted, a release of what is not held is done), with the refusal in the real words.
// Its calls are logged on their own, so the drain's and the maintenance's call logs stay as they were.
import type { AcquireResult, DisruptionInput, ReleaseInput } from '../../activities/budget/index.js';
import { Context } from '@temporalio/activity';
import { waitForDisruptionWith, type DisruptionWaitInput } from '../../activities/budget/wait.js';
import { CallLog } from './scripted.js';
import type { BudgetFitInput, BudgetFitResult } from '../../activities/budget/fit.js';
import { tooSmallMessage } from '../../shared/budget-fit.js';

/** The fake's "budget change": none is announced, so the wait asks again every 50 ms. */
const ASK_MS = 50;

export class FakeBudget extends CallLog {
  /** node → holder. */
  readonly disrupted = new Map<string, string>();
  /** The most nodes disrupted at once. */
  most = 0;
  /** Overrides the window of every waitForDisruption (0: it asks once and ends, as at the end of its window). */
  windowMs?: number;

  /** `limit` undefined: no budget selects the nodes (every slot granted). */
  constructor(public limit?: number, readonly name = 'fake') {
    super();
  }

  /** The reason the ledger gives a refused node now. */
  reason(): string {
    return `waiting for NodeDisruptionBudget ${this.name}: ${this.disrupted.size} of ${this.limit} nodes disrupted`;
  }

  private acquire(input: DisruptionInput): AcquireResult {
    const out: AcquireResult = { granted: [], waiting: [] };
    for (const node of input.nodes) {
      if (this.limit === undefined || this.disrupted.has(node) || this.disrupted.size < this.limit) {
        if (this.limit !== undefined) this.disrupted.set(node, this.disrupted.get(node) ?? input.holder);
        out.granted.push(node);
      } else out.waiting.push({ node, reason: this.reason() });
    }
    this.most = Math.max(this.most, this.disrupted.size);
    return out;
  }

  activities() {
    const acquire = async (input: DisruptionInput): Promise<AcquireResult> => this.acquire(input);
    const wait = waitForDisruptionWith(acquire, (maxMs) => Context.current().sleep(Math.max(0, Math.min(ASK_MS, maxMs))));
    return {
      acquireDisruption: this.logged('acquireDisruption', async (input: DisruptionInput): Promise<AcquireResult> => this.acquire(input)),
      // The real wait (activities/budget/wait.ts) over this ledger (its asks are not logged: they are not the workflow's).
      waitForDisruption: this.logged('waitForDisruption', (input: DisruptionWaitInput) => wait({ ...input, timeoutMs: this.windowMs ?? input.timeoutMs })),
      // activities/budget/fit.ts over this one budget, which selects every node the maintenance asks about.
      maintenanceBudgetFit: this.logged('maintenanceBudgetFit', async ({ nodes }: BudgetFitInput): Promise<BudgetFitResult> =>
        this.limit !== undefined && this.limit > 0 && nodes.length > this.limit
          ? { cannotFinish: tooSmallMessage({ budget: this.name, selected: nodes.length, covered: nodes.length, limit: this.limit, limitReason: `maxDisrupted ${this.limit}` }) }
          : {},
      ),
      releaseDisruption: this.logged('releaseDisruption', async (input: ReleaseInput): Promise<{ released: number }> => {
        let released = 0;
        for (const n of input.nodes ?? [...this.disrupted.keys()]) if (this.disrupted.get(n) === input.holder && this.disrupted.delete(n)) released++;
        return { released };
      }),
    };
  }
}
