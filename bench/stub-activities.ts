// Scripted stand-ins for the activities a cycle calls, answering at once from an in-memory node
// group: for benchmarks and workflow tests of the orchestration alone (the cluster is not the point).
// They count what was done, so a test can check that every node was cycled exactly once.
import { ApplicationFailure } from '@temporalio/common';
import type { Activities } from '../activities/index.js';
import type { GroupNode, ResolvedCycle } from '../activities/cycle/resolve.js';

export interface StubCluster {
  nodes: GroupNode[];
  /** Calls per activity name. */
  calls: Map<string, number>;
  /** Old instances terminated, by providerID (each must be 1). */
  terminated: Map<string, number>;
  uncordoned: string[];
  /** Nodes detached from their group, in order. */
  detached: string[];
  /** When set, the node cycle of this node fails (its terminateInstance refuses). */
  failNode?: string;
}

export function stubCluster(count: number, group = 'stub-group'): StubCluster {
  const nodes = Array.from({ length: count }, (_, i) => {
    const name = `${group}-${String(i).padStart(5, '0')}`;
    return { name, providerID: `kwok://${name}`, nodeGroup: group, ready: true, cordoned: false, createdAtMs: 0 };
  });
  return { nodes, calls: new Map(), terminated: new Map(), uncordoned: [], detached: [] };
}

/**
 * A stub group with EC2-length names and provider IDs (`ip-10-0-1-00042.eu-west-1.compute.internal`,
 * `aws:///eu-west-1a/i-0…` with a 17-hex instance ID): payload sizes as a real fleet's.
 */
export function ec2StubCluster(count: number, group = 'stub-group'): StubCluster {
  const c = stubCluster(count, group);
  c.nodes = c.nodes.map((n, i) => ({
    ...n,
    name: `ip-10-0-1-${String(i).padStart(5, '0')}.eu-west-1.compute.internal`,
    providerID: `aws:///eu-west-1a/i-0${i.toString(16).padStart(16, '0')}`,
  }));
  return c;
}

type Stubbed = Pick<Activities, 'resolveCycle' | 'claimNodes' | 'acquireDisruption' | 'releaseDisruption' | 'detachNodes' | 'waitForReplacements' | 'protectFromScaleDown' | 'releaseScaleDown' | 'cordonNode' | 'uncordonNode' | 'instanceExists' | 'classifyPods' | 'waitForVolumeDetach' | 'deleteNode' | 'terminateInstance' | 'healNodes' | 'healthCheckSelection' | 'nextNodes'>;

export function stubActivities(c: StubCluster): Stubbed {
  let replacements = 0;
  const count = <A extends unknown[], R>(name: string, f: (...a: A) => R) => async (...a: A): Promise<R> => {
    c.calls.set(name, (c.calls.get(name) ?? 0) + 1);
    return f(...a);
  };
  const groups = [...new Set(c.nodes.map((n) => n.nodeGroup))];
  return {
    // The selection is a cursor (#28): the first page, then nextNodes (the nodes are in name order).
    resolveCycle: count('resolveCycle', (i: { limit?: number }): ResolvedCycle => ({
      errors: [], warnings: [], provider: 'kwok', groups, nodes: c.nodes.slice(0, i.limit ?? 500), nodesTotal: c.nodes.length, resolvedAtMs: 1, reattached: [],
      mismatch: { nodesWithoutInstance: [], instancesWithoutNode: [], nodesWithoutInstanceCount: 0, instancesWithoutNodeCount: 0 },
      settings: { method: 'Drain', concurrency: c.nodes.length, cyclingTimeoutMs: 3_600_000, labelsToRemove: [], ignorePodsLabels: {}, ignoreNamespaces: [] },
    })),
    nextNodes: count('nextNodes', (i: { after?: string; limit: number }) => {
      const from = i.after === undefined ? 0 : c.nodes.findIndex((n) => n.name > i.after!);
      return { nodes: from < 0 ? [] : c.nodes.slice(from, from + Math.min(i.limit, 500)) };
    }),
    // No NodeMaintenance holds a stub node: every claim goes through.
    claimNodes: count('claimNodes', (i: { nodes: string[] }) => ({ claimed: i.nodes, gone: [] as string[], held: [] })),
    // No NodeDisruptionBudget limits a stub node: every slot is granted.
    acquireDisruption: count('acquireDisruption', (i: { nodes: string[] }) => ({ granted: i.nodes, waiting: [] as Array<{ node: string; reason: string }> })),
    releaseDisruption: count('releaseDisruption', (i: { nodes?: string[] }) => ({ released: i.nodes?.length ?? 0 })),
    detachNodes: count('detachNodes', (i: { nodes: GroupNode[] }) => {
      c.detached.push(...i.nodes.map((n) => n.name));
      return { detached: i.nodes.map((n) => n.name), gone: [] };
    }),
    waitForReplacements: count('waitForReplacements', (i: { needed: number }) => {
      const newNodes = Array.from({ length: i.needed }, () => `replacement-${replacements++}`);
      return { ready: true, newNodes, message: `${newNodes.length} replacement nodes Ready and healthy` };
    }),
    protectFromScaleDown: count('protectFromScaleDown', (i: { nodes: string[] }) => i.nodes),
    releaseScaleDown: count('releaseScaleDown', (i: { nodes?: string[] }) => i.nodes ?? []),
    cordonNode: count('cordonNode', () => ({ exists: true, changed: true })),
    uncordonNode: count('uncordonNode', (name: string) => {
      c.uncordoned.push(name);
      return { exists: true, changed: true };
    }),
    instanceExists: count('instanceExists', () => true),
    classifyPods: count('classifyPods', (i: { nodeName: string }) => ({
      node: { name: i.nodeName, exists: true, unreachable: false, cordoned: true }, pods: [], errors: [], heldBy: [],
      settings: { podEvictionTimeoutPolicy: 'Wait' as const, evictionConcurrency: 10, evictionQPS: 10 },
    })),
    waitForVolumeDetach: count('waitForVolumeDetach', () => ({ detached: true, message: 'no volumes attached' })) as unknown as Stubbed['waitForVolumeDetach'],
    deleteNode: count('deleteNode', () => ({ existed: true })),
    terminateInstance: count('terminateInstance', (i: { providerID: string }) => {
      if (c.failNode && i.providerID.endsWith(`/${c.failNode}`)) throw ApplicationFailure.nonRetryable(`stub: cannot terminate ${i.providerID}`, 'StubRefusal');
      c.terminated.set(i.providerID, (c.terminated.get(i.providerID) ?? 0) + 1);
      return { alreadyGone: false };
    }),
    // As the real one: healing uncordons each node it puts back, then drops the cycle's claim.
    healNodes: count('healNodes', (i: { nodes: GroupNode[] }) => {
      c.uncordoned.push(...i.nodes.map((n) => n.name));
      return { reattached: [] };
    }),
    healthCheckSelection: count('healthCheckSelection', () => ({ passed: true, failures: [] as string[] })),
  };
}
