// Scripted stand-ins for a cycle's activities (activities/cycle/*.ts), for workflow tests: a node
// group of fake nodes, replacements that come (or not) when the test says, checks that pass or
// fail, and each node's drain answered by a FakeDrain of its own. Any step can be held (it waits
// until released) so a test can act while the cycle sits in a phase. Every call is logged.
import type { CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import type { GroupNode, ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { ReplacementInput } from '../../activities/cycle/scale.js';
import type { HeldNode } from '../../activities/cycle/claim.js';
import type { HeldWaitInput } from '../../activities/cycle/held-wait.js';
import type { DisruptionInput } from '../../activities/budget/index.js';
import type { DisruptionWaitInput } from '../../activities/budget/wait.js';
import { cycleWorkflowId, type CycleRequestInput } from '../../workflows/cycle/types.js';
import { FakeBudget } from './fake-budget.js';
import { FakeDrain } from './fake-drain.js';
import { CallLog, until } from './scripted.js';

const DRAIN_ACTIVITIES = ['classifyPods', 'evictPods', 'deletePods', 'waitForWave', 'waitForVolumeDetach', 'waitForDrainRuleChange', 'recordEvent'] as const;

/** Which node a drain activity's input is about. */
const nodeOf = (input: unknown): string | undefined =>
  typeof input === 'string' ? input : ((input as { nodeName?: string }).nodeName ?? (input as { involved?: { name?: string } }).involved?.name);

export class FakeCycle extends CallLog {
  readonly provider = 'fake';
  readonly nodes: GroupNode[];
  /** Each node's drain (pods, refusals ...): empty nodes by default. */
  readonly drains = new Map<string, FakeDrain>();
  /** Steps (activity names) that wait until released. */
  readonly held = new Set<string>();
  /** What resolveCycle reports as invalid (nothing else happens then). */
  errors: string[] = [];
  replacementsReady = true;
  preTerminationFailures: string[] = [];
  /** Nodes a NodeMaintenance holds (claimNodes sets them aside); delete one to let the cycle have it. */
  readonly maintenanceHolds = new Map<string, Omit<HeldNode, 'node'>>();
  /** A NodeDisruptionBudget over every node of the group (undefined: none). */
  budget?: FakeBudget;
  /** Pre-terminate hook owners per node (pre-drain ones are the drain's: `drains.get(n).node.preDrainHooks`); empty them to release. */
  readonly preTerminateHooks = new Map<string, string[]>();
  private created = 0;

  constructor(
    readonly group: string,
    count: number,
    readonly settings: Partial<ResolvedCycle['settings']> = {},
  ) {
    super();
    this.nodes = Array.from({ length: count }, (_, i) => ({ name: `${group}-${i}`, providerID: `fake:///${group}-${i}`, nodeGroup: group, ready: true, cordoned: false, createdAtMs: 0 }));
    for (const n of this.nodes) this.drains.set(n.name, new FakeDrain(n.name));
  }

  /** A request for this group: its workflow ID and input. */
  request(name: string, spec: Partial<CycleNodeRequestSpecInput> = {}): { workflowId: string; input: CycleRequestInput } {
    const request = { namespace: 'ops', name, uid: `uid-${name}` };
    return { workflowId: cycleWorkflowId(request), input: { request, spec: { nodeGroupName: this.group, selector: { matchLabels: { group: this.group } }, ...spec } } };
  }

  private sorted(): GroupNode[] {
    return [...this.nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  release(step: string): void {
    this.held.delete(step);
  }

  /** Names of the nodes an activity was called for, in call order (inputs with `nodes`, `node` or a node name). */
  nodesOf(step: string): string[][] {
    return this.callsOf(step).map((c) => {
      const i = c.input as { nodes?: Array<string | { name: string }>; node?: { name: string } } | string;
      if (typeof i === 'string') return [i];
      if (i.nodes) return i.nodes.map((n) => (typeof n === 'string' ? n : n.name));
      return i.node ? [i.node.name] : [];
    });
  }

  /** The budget's activities (test/support/fake-budget.ts), logged here too; without a budget every slot is granted. */
  private budgetActivities(step: <I, O>(name: string, fn: (input: I) => O | Promise<O>) => (input: I) => Promise<O>) {
    const b = () => (this.budget ?? new FakeBudget()).activities();
    return {
      acquireDisruption: step('acquireDisruption', (input: DisruptionInput) => b().acquireDisruption(input)),
      waitForDisruption: step('waitForDisruption', (input: DisruptionWaitInput) => b().waitForDisruption(input)),
      releaseDisruption: step('releaseDisruption', (input: DisruptionInput) => b().releaseDisruption(input)),
    };
  }

  activities() {
    const step = <I, O, R extends unknown[] = []>(name: string, fn: (input: I, ...more: R) => O | Promise<O>) =>
      this.logged(name, async (input: I, ...more: R): Promise<O> => {
        await until(() => !this.held.has(name), 24 * 3600_000);
        return fn(input, ...more);
      });
    const settings: ResolvedCycle['settings'] = {
      method: 'Drain',
      concurrency: 1,
      cyclingTimeoutMs: 3600_000,
      labelsToRemove: [],
      ignorePodsLabels: {},
      ignoreNamespaces: [],
      ...this.settings,
    };
    const drainActivities = Object.fromEntries(
      DRAIN_ACTIVITIES.map((name) => [
        name,
        (input: unknown) => {
          const drain = this.drains.get(nodeOf(input) ?? '') ?? [...this.drains.values()][0]!;
          return (drain.activities()[name] as (i: unknown) => Promise<unknown>)(input);
        },
      ]),
    );
    return {
      ...drainActivities,
      // The selection is a cursor (#28): the first page, then nextNodes, in name order.
      resolveCycle: step('resolveCycle', (input: { spec: CycleNodeRequestSpecInput; limit?: number }): ResolvedCycle => ({
        errors: this.errors,
        warnings: [],
        provider: this.provider,
        groups: [this.group],
        nodes: this.sorted().slice(0, input.limit ?? 500),
        nodesTotal: this.nodes.length,
        resolvedAtMs: 1,
        mismatch: { nodesWithoutInstance: [], instancesWithoutNode: [], nodesWithoutInstanceCount: 0, instancesWithoutNodeCount: 0 },
        reattached: [],
        settings: { ...settings, concurrency: input.spec.cycleSettings?.concurrency ?? settings.concurrency },
      })),
      // As activities/cycle/held-wait.ts: answers when a held node's hold goes or changes, or at the end of its window.
      waitForHeldNodes: this.logged('waitForHeldNodes', async (input: HeldWaitInput): Promise<{ node?: string; changed?: string }> => {
        const changed = () => input.held.find((h) => {
          const now = this.maintenanceHolds.get(h.node);
          return !now || now.maintenance !== h.maintenance || now.stage !== h.stage;
        });
        await until(() => changed() !== undefined, input.timeoutMs);
        const c = changed();
        return c ? { node: c.node, changed: this.maintenanceHolds.has(c.node) ? 'holder changed' : 'released' } : {};
      }),
      claimNodes: step('claimNodes', (input: { nodes: string[] }) => {
        const held = input.nodes.filter((n) => this.maintenanceHolds.has(n)).map((node) => ({ node, ...this.maintenanceHolds.get(node)! }));
        return { claimed: input.nodes.filter((n) => !this.maintenanceHolds.has(n)), gone: [] as string[], held };
      }),
      detachNodes: step('detachNodes', (input: { nodes: GroupNode[] }) => ({ detached: input.nodes.map((n) => n.name), gone: [] })),
      waitForReplacements: step('waitForReplacements', (input: ReplacementInput) =>
        this.replacementsReady
          ? { ready: true, newNodes: Array.from({ length: input.needed }, () => `${this.group}-new-${this.created++}`), message: 'replacements Ready' }
          : { ready: false, newNodes: [], message: `no replacement became Ready within ${input.timeoutMs / 1000}s` },
      ),
      protectFromScaleDown: step('protectFromScaleDown', (input: { nodes: string[] }) => input.nodes),
      releaseScaleDown: step('releaseScaleDown', (input: { nodes?: string[] }) => input.nodes ?? []),
      healNodes: step('healNodes', (input: { nodes: GroupNode[] }) => {
        for (const n of input.nodes) this.drains.get(n.name)!.node.cordoned = false; // uncordoned before the claim goes
        return { reattached: input.nodes.map((n) => n.name), uncordoned: input.nodes.map((n) => n.name) };
      }),
      nextNodes: step('nextNodes', (input: { after?: string; limit: number }) => ({ nodes: this.sorted().filter((n) => input.after === undefined || n.name > input.after).slice(0, input.limit) })),
      healthCheckSelection: step('healthCheckSelection', () => ({ passed: true, failures: [] as string[] })),
      preTerminationChecks: step('preTerminationChecks', () => ({ passed: this.preTerminationFailures.length === 0, failures: this.preTerminationFailures })),
      cordonNode: step('cordonNode', (name: string) => (this.drains.get(name)!.node.cordoned = true, { exists: true, changed: true })),
      uncordonNode: step('uncordonNode', (name: string) => (this.drains.get(name)!.node.cordoned = false, { exists: true, changed: true })),
      instanceExists: step('instanceExists', () => true),
      removePodLabels: step('removePodLabels', () => ({ pods: [] as string[] })),
      waitForDoNotDisruptPods: step('waitForDoNotDisruptPods', () => ({ done: true, remaining: [] as string[] })),
      deleteNode: step('deleteNode', (name: string, opts?: { unlessHooked?: boolean }): { existed: boolean; hooks?: string[] } => {
        const hooks = this.preTerminateHooks.get(name) ?? [];
        if (opts?.unlessHooked && hooks.length) return { existed: true, hooks: [...hooks] };
        this.drains.get(name)!.node.exists = false;
        return { existed: true };
      }),
      // Pre-drain hooks are the drain's (FakeDrain); pre-terminate ones are answered here.
      waitForLifecycleHooks: this.logged('waitForLifecycleHooks', async (input: { nodeName: string; stage: 'pre-drain' | 'pre-terminate'; timeoutMs: number }) => {
        if (input.stage === 'pre-drain') return this.drains.get(input.nodeName)!.activities().waitForLifecycleHooks(input);
        const owners = () => this.preTerminateHooks.get(input.nodeName) ?? [];
        await until(() => owners().length === 0, input.timeoutMs);
        return { owners: [...owners()], nodeGone: false };
      }),
      terminateInstance: step('terminateInstance', () => ({ alreadyGone: false })),
      ...this.budgetActivities(step),
    };
  }
}
