// One node's cycle, a child of the request: Pending → WaitingPods (Wait method) →
// RemovingLabelsFromPods → DrainingPods (the drain engine, as a child) → DeletingNode →
// TerminatingNode → Successful, or Failed. Bounded by cyclingTimeout. The replacement capacity is
// already up (the request scaled up first), so this only takes the old node away.
import {
  ApplicationFailure,
  CancellationScope,
  executeChild,
  isCancellation,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CycleNodePhase } from '../../api/cycle-node-request.js';
import { ownersText, PRE_TERMINATE_HOOK_PREFIX } from '../../api/lifecycle-hooks.js';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { GroupNode, ResolvedCycle } from '../../activities/cycle/resolve.js';
import { drainWorkflow } from '../drain/drain.js';
import { fewNames, outcomeSummary, type DrainStatus } from '../drain/status.js';
import { nodeDrainWorkflowId } from '../ids.js';
import { nodeCycleStatusQuery, nodeProgressSignal } from '../messages.js';
import { NodeGroupAttr, NodesAttr, PhaseAttr } from '../search-attributes.js';
import type { CycleNodeStatus } from './types.js';
import { latestOnly, whenSettled } from '../progress.js';
import { longSteps, steps } from '../proxies.js';
import { DO_NOT_DISRUPT } from '../../api/names.js';

const act = steps;
const waits = longSteps('4 hours');

/** How long a quick phase may last before the request and the search attributes hear of it. */
const QUICK_PHASE_REPORT_MS = 2000;

export interface NodeCycleInput {
  parentId: string;
  node: GroupNode;
  provider: string;
  settings: ResolvedCycle['settings'];
  drain?: DrainOptionsInput;
  /** cyclenoderequest/<ns>/<name>: the requester in the Evacuations the drain joins (NM-5.8). */
  requester?: string;
}

export async function cycleNodeWorkflow(input: NodeCycleInput): Promise<CycleNodeStatus> {
  const { node, settings } = input;
  const started = Date.now();
  const deadline = started + settings.cyclingTimeoutMs;
  const st: CycleNodeStatus = {
    nodeName: node.name,
    phase: 'Pending',
    providerID: node.providerID,
    nodeGroup: node.nodeGroup,
    startedAt: new Date(started).toISOString(),
    timeoutAt: new Date(deadline).toISOString(),
  };
  setHandler(nodeCycleStatusQuery, () => st);
  upsertSearchAttributes([
    { key: NodesAttr, value: [node.name] },
    { key: NodeGroupAttr, value: node.nodeGroup },
    { key: PhaseAttr, value: st.phase },
  ]);
  const c: NodeCycle = { input, st, deadline, ...reporter(input, st) };
  try {
    return await cycle(c);
  } catch (err) {
    // Every end reaches the request by its report, also a cancellation or an unexpected error: a
    // request that continued as new can no longer hear this workflow's result.
    if (st.phase !== 'Failed') {
      const why = isCancellation(err) ? 'cancelled' : ((err as Error & { cause?: Error }).cause?.message ?? (err as Error).message);
      await CancellationScope.nonCancellable(() => c.finish('Failed', why));
    }
    throw err;
  }
}

/** One node's cycle: its input and status, its deadline, and how it reports. */
interface NodeCycle {
  input: NodeCycleInput;
  st: CycleNodeStatus;
  deadline: number;
  /** Sets the phase; a quick one (a single short step) reaches the request only if it lasts. */
  phase: (p: CycleNodePhase, message?: string, quick?: boolean) => void;
  /** The last phase reaches the parent before the result does. */
  finish: (p: 'Successful' | 'Failed', message?: string) => Promise<void>;
  /** Reports Failed and throws. */
  fail: (message: string) => Promise<never>;
}

/**
 * Progress goes to the parent without blocking the next step; quick phases coalesce, and the
 * sequence number lets the parent drop a report that arrives late.
 */
function reporter(input: NodeCycleInput, st: CycleNodeStatus): Pick<NodeCycle, 'phase' | 'finish' | 'fail'> {
  const { node } = input;
  const parent = getExternalWorkflowHandle(input.parentId);
  let seq = 0;
  const progress = latestOnly(() => parent.signal(nodeProgressSignal, { ...st, seq: ++seq }));
  const publish = () => {
    upsertSearchAttributes([{ key: PhaseAttr, value: st.phase }]);
    progress.report();
  };
  // Quick phases (a single short step) are published only if they turn out slow, e.g. a step
  // retrying against a failing API; most pass unseen, saving a signal and two workflow tasks each.
  const slowQuickPhase = whenSettled(QUICK_PHASE_REPORT_MS, publish);
  const phase = (p: CycleNodePhase, message?: string, quick = false) => {
    st.phase = p;
    st.message = message;
    setCurrentDetails(`**${node.name}**: ${p}${message ? `\n\n${message}` : ''}`);
    if (quick) return slowQuickPhase.changed();
    slowQuickPhase.cancel();
    publish();
  };
  const finish = async (p: 'Successful' | 'Failed', message?: string) => {
    phase(p, message);
    await progress.flush();
  };
  const fail = async (message: string): Promise<never> => {
    await finish('Failed', message);
    throw ApplicationFailure.nonRetryable(`${node.name}: ${message}`, 'NodeCycleFailed');
  };
  return { phase, finish, fail };
}

/** The steps, Pending to Successful, each its own function below; `fail` reports and throws. */
async function cycle(c: NodeCycle): Promise<CycleNodeStatus> {
  if (await goneAlready(c)) return c.st;
  if (c.input.settings.method === 'Wait') await waitForDoNotDisruptPods(c);
  const removing = removePodLabels(c);
  if (removing) await removing;
  const drained = await drainNode(c);
  c.st.evicted = drained.evicted;
  // Pods that kept coming back are on the node when it is deleted: named for the request (and its Event).
  if (drained.returning.length) c.st.returning = drained.returning;
  await takeAway(c);
  await c.finish('Successful', drainedMessage(drained));
  return c.st;
}

/** Pending: cordon it. Someone else removed the node or its instance: nothing left to take away (Successful). */
async function goneAlready({ input, phase, finish }: NodeCycle): Promise<boolean> {
  const { node } = input;
  phase('Pending', undefined, true);
  // Independent reads.
  const [cordon, instance] = await Promise.all([
    act.cordonNode.executeWithOptions({ summary: `cordon ${node.name}` }, [node.name]),
    act.instanceExists.executeWithOptions({ summary: `does ${node.providerID} exist` }, [{ provider: input.provider, providerID: node.providerID }]),
  ]);
  if (cordon.exists && instance) return false;
  if (cordon.exists) await act.deleteNode.executeWithOptions({ summary: `delete orphaned Node ${node.name}` }, [node.name]);
  await finish('Successful', !cordon.exists ? 'node was removed by someone else' : 'instance was terminated by someone else');
  return true;
}

/** WaitingPods (the Wait method): until no pod annotated do-not-disrupt runs, within cyclingTimeout. */
async function waitForDoNotDisruptPods({ input, deadline, phase, fail }: NodeCycle): Promise<void> {
  const { node, settings } = input;
  phase('WaitingPods', `waiting for pods annotated ${DO_NOT_DISRUPT}=true to finish`);
  const w = await waits.waitForDoNotDisruptPods.executeWithOptions({ summary: `wait for do-not-disrupt pods on ${node.name}` }, [
    { nodeName: node.name, rules: { ignorePodsLabels: settings.ignorePodsLabels, ignoreNamespaces: settings.ignoreNamespaces }, timeoutMs: Math.max(0, deadline - Date.now()) },
  ]);
  if (!w.done) await fail(`cyclingTimeout reached waiting for pods: ${w.remaining.join(', ')}`);
}

/**
 * RemovingLabelsFromPods: `labelsToRemove` off the node's pods. With none to remove it returns
 * nothing to await, so DrainingPods follows in the same tick and this quick phase's report timer
 * is never started: an await in between would add a timer command to every such history.
 */
function removePodLabels({ input, phase }: NodeCycle): Promise<unknown> | undefined {
  const { node, settings } = input;
  phase('RemovingLabelsFromPods', undefined, true);
  if (!settings.labelsToRemove.length) return undefined;
  return act.removePodLabels.executeWithOptions({ summary: `remove labels ${settings.labelsToRemove.join(', ')}` }, [
    { nodeName: node.name, keys: settings.labelsToRemove },
  ]);
}

/**
 * What the drain did, kept in the node's final message (one line): the pods evicted and deleted, the
 * pods that stayed on the node and why, named (a few, the rest counted), and a skipped volume wait.
 */
export function drainedMessage(s: Pick<DrainStatus, 'evicted' | 'forced' | 'skipped' | 'returning' | 'volumes'>): string {
  const parts = [outcomeSummary(s)];
  if (s.volumes && (s.volumes.timedOut || s.volumes.message.startsWith('not waited for'))) parts.push(`volumes ${s.volumes.message.replace(/\s*\n\s*/g, ' ')}`);
  return parts.join('; ');
}

/**
 * The request's Successful message: the nodes cycled and, when pods kept coming back to a node
 * until it was deleted, how many, on which nodes (a few named, the rest counted).
 */
/**
 * The request's end message. `nodes` may be only the first of the nodes that had a pod left on
 * them (#28: a request keeps a few); `counts` then says how many nodes were cycled, had pods left, and how many pods.
 */
export function cycledMessage(nodes: readonly CycleNodeStatus[], counts?: { cycled: number; nodes: number; pods: number }): string {
  const cycled = nodes.filter((n) => n.phase === 'Successful');
  const total = counts?.cycled ?? cycled.length;
  const base = `${total} ${total === 1 ? 'node' : 'nodes'} cycled`;
  const left = cycled.filter((n) => n.returning?.length);
  const leftNodes = counts?.nodes ?? left.length;
  if (!leftNodes) return base;
  const k = counts?.pods ?? left.reduce((sum, n) => sum + n.returning!.length, 0);
  const named = left.map((n) => `${n.nodeName} (${fewNames(n.returning!.map((r) => r.pod))})`);
  const where = fewNames([...named, ...Array<string>(Math.max(0, leftNodes - named.length)).fill('')]);
  return `${base}; ${k} ${k === 1 ? 'Pod was' : 'Pods were'} left on ${leftNodes === 1 ? 'a node' : `${leftNodes} nodes`} when deleted, having come back after every eviction: ${where}`;
}

/** DrainingPods: the drain engine as a child; it waits and reports (never loops back), cyclingTimeout bounds it. Returns the drain's status. */
async function drainNode({ input, deadline, phase, fail }: NodeCycle): Promise<DrainStatus> {
  const { node, settings } = input;
  phase('DrainingPods');
  const drainScope = new CancellationScope();
  const drain = drainScope.run(() =>
    executeChild(drainWorkflow, {
      workflowId: nodeDrainWorkflowId(workflowInfo().workflowId),
      args: [{ nodeName: node.name, options: input.drain, reportTo: input.parentId, ...(input.requester ? { requester: { name: input.requester } } : {}) }],
    }),
  );
  let timedOut = false;
  try {
    timedOut = await Promise.race([drain.then(() => false), sleep(Math.max(0, deadline - Date.now())).then(() => true)]);
  } catch (err) {
    const e = err as Error & { cause?: Error };
    await fail(`drain failed: ${e.cause?.message ?? e.message}`);
  }
  if (timedOut) {
    drainScope.cancel();
    await drain.catch(() => undefined);
    await fail(`cyclingTimeout (${settings.cyclingTimeoutMs / 1000}s) reached while draining`);
  }
  return (await drain).status;
}

/**
 * DeletingNode, TerminatingNode: the old node goes (its replacement is already up). Pre-terminate
 * hooks hold it first: they live on the Node, which is deleted before its instance is terminated, so
 * the delete is where they are checked (`deleteNode` deletes nothing while one is there).
 */
async function takeAway(c: NodeCycle): Promise<void> {
  const { input, phase } = c;
  const { node } = input;
  phase('DeletingNode', undefined, true);
  for (;;) {
    const d = await act.deleteNode.executeWithOptions({ summary: `delete Node ${node.name}` }, [node.name, { unlessHooked: true }]);
    if (!d.hooks?.length) break;
    await waitForPreTerminateHooks(c, d.hooks);
  }
  // Issue 15: deleted, so no longer disrupted: give the request's NodeDisruptionBudget slot back.
  await act.releaseDisruption.executeWithOptions({ summary: `release the budget slot of ${node.name}` }, [{ holder: input.parentId, nodes: [node.name] }]);
  phase('TerminatingNode', undefined, true);
  await act.terminateInstance.executeWithOptions({ summary: `terminate ${node.providerID}` }, [{ provider: input.provider, providerID: node.providerID }]);
}

/** One window of the wait for pre-terminate hooks: bounded activities, so a week's hold is a few hundred events. */
const HOOK_WINDOW_MS = 30 * 60_000;

/** DeletingNode, held: until no pre-terminate hook is on the node (then the delete looks again), within cyclingTimeout. */
async function waitForPreTerminateHooks({ input, st, deadline, phase, fail }: NodeCycle, owners: string[]): Promise<void> {
  const { node } = input;
  const waiting = preTerminateMessage(node.name, owners);
  if (st.message !== waiting) phase('DeletingNode', waiting); // reported at once, and again only when the owners change
  const left = deadline - Date.now();
  if (left <= 0) await fail(`cyclingTimeout reached waiting for pre-terminate hooks: ${ownersText(owners)}`);
  await waits.waitForLifecycleHooks.executeWithOptions({ summary: `waiting for pre-terminate hooks: ${ownersText(owners)}` }, [
    { nodeName: node.name, stage: 'pre-terminate', timeoutMs: Math.min(HOOK_WINDOW_MS, left) },
  ]);
}

/** The node's status message while pre-terminate hooks hold it. */
export function preTerminateMessage(nodeName: string, owners: string[]): string {
  return `waiting for pre-terminate hooks: ${ownersText(owners)} (Node ${nodeName} has annotations ${PRE_TERMINATE_HOOK_PREFIX}<owner>; it is neither deleted nor terminated until their owners remove them)`;
}
