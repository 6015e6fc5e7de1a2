// `slipway drain`, and reading a drain: its live status, following it to the end, and the end
// itself checked against a fresh read of the node (a drain that ends with pods left is no success).
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { HELD_BY_ANNOTATION } from '../../api/node-maintenance.js';
import { webUiLink } from '../../shared/temporal.js';
import { drainWorkflowId } from '../../workflows/ids.js';
import { drainWorkflow } from '../../workflows/index.js';
import { drainStatusQuery } from '../../workflows/messages.js';
import { truncate } from '../../shared/drain.js';
import { drainMessage, type DrainStatus } from '../../workflows/drain/status.js';
import { NodeGroupAttr, NodesAttr, PhaseAttr } from '../../workflows/search-attributes.js';
import { CliError } from './errors.js';
import { doc, type CliDocument } from './output.js';
import { oneLine } from './explain.js';
import { podsLeft } from './pods.js';
import { describe, drainOfNode, drainOwner, NoDrainError, type Target } from './resolve.js';
import type { Session } from './session.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

export type Out = (line: string) => void;
export interface Io {
  out: Out;
  err: Out;
  /** With -o: the one document of the run (text lines are then not printed). */
  doc?: (d: CliDocument) => void;
}

/** How long a query may wait for a worker to answer. */
const QUERY_TIMEOUT_MS = 10_000;
const POLL_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const at = (d?: Date) => (d ? d.toISOString() : '?');

/** undefined when the node is gone (nothing can be left on it). */
async function readPodsLeft(session: Session, node: string, kept: ReadonlySet<string>): Promise<string[] | undefined> {
  const pods = await session.read(`pods on node ${node}`, async (k) => {
    await k.core.readNode({ name: node }); // 404: the node is gone
    return (await k.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
  });
  return pods && podsLeft(pods, kept);
}

const podsWord = (n: number) => (n === 1 ? '1 Pod is' : `${n} Pods are`);

/** A closed drain: its result, and whether it left the node empty. One line. */
export async function closedDrain(session: Session, client: Client, t: Target & { kind: 'drain' }, desc: WorkflowExecutionDescription): Promise<{ ok: boolean; line: string }> {
  const head = `${t.id} ${desc.status.name === 'COMPLETED' ? 'finished' : desc.status.name.toLowerCase().replace('_', ' ')} at ${at(desc.closeTime)}`;
  let status: DrainStatus | undefined;
  let failure: string | undefined;
  try {
    status = ((await client.workflow.getHandle(t.id).result()) as { status: DrainStatus }).status;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    failure = oneLine(err, session.ctx);
  }
  const left = await readPodsLeft(session, t.node, new Set(status?.skipped.map((s) => s.pod) ?? []));
  const stillThere = left?.length ? `${podsWord(left.length)} still on node ${t.node}: ${truncate(left, 10)}` : '';
  if (failure) return { ok: false, line: `${head}: drain failed: ${failure}${stillThere ? `; ${stillThere}` : ''}` };
  const message = drainMessage(status!).split('\n').map((l) => l.trim()).join(' '); // one line
  if (stillThere) return { ok: false, line: `${head}: ${message}, but ${stillThere}` };
  return { ok: true, line: `${head}: ${message}` };
}

async function queryDrain(client: Client, id: string): Promise<DrainStatus> {
  return client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflow.getHandle(id).query(drainStatusQuery));
}

const noAnswer = (t: Target, desc: WorkflowExecutionDescription) =>
  `${t.id} is running, but no worker answered within ${QUERY_TIMEOUT_MS / 1000} s: is a worker polling task queue ${desc.taskQueue}?`;

/** A cycle's or a maintenance's drain that has not started yet: what the node's cycle or coordinator is doing instead. */
async function notStarted(client: Client, t: Target & { kind: 'drain' }): Promise<string | undefined> {
  const owner = drainOwner(t);
  if (!owner) return undefined;
  const d = await describe(client, owner);
  if (!d) return undefined;
  const phase = d.typedSearchAttributes.get(PhaseAttr);
  const doing = d.status.name === 'RUNNING' ? `phase ${phase ?? '?'}` : d.status.name.toLowerCase();
  if (t.cycleId) return `node ${t.node} is in cycle ${owner} (${doing}); its drain ${t.id} has not started`;
  return `node ${t.node} is held by maintenance coordinator ${owner} (${doing}); its drain ${t.id} has not started`;
}

/** `status` of a drain: what it is doing now, or how it ended. */
export async function drainStatus(session: Session, t: Target & { kind: 'drain' }, io: Io): Promise<number> {
  const client = await session.client();
  const desc = await describe(client, t.id);
  if (!desc) {
    const why = await notStarted(client, t);
    if (!why) throw new CliError(`no workflow ${t.id} in Temporal namespace ${session.settings.namespace}`);
    io.doc?.(doc({ kind: 'Status', target: 'drain', workflowId: t.id, state: 'not-started', message: why }));
    io.out(why);
    return 0;
  }
  if (desc.status.name !== 'RUNNING') {
    const end = await closedDrain(session, client, t, desc);
    io.doc?.(doc({ kind: 'Status', target: 'drain', workflowId: t.id, state: desc.status.name.toLowerCase(), closedAt: desc.closeTime?.toISOString(), webUi: webUiLink(t.id), message: end.line }));
    io.out(end.line);
    return 0;
  }
  const s = await queryDrain(client, t.id).catch((err: unknown) => {
    throw new CliError(err instanceof WorkflowFailedError ? oneLine(err, session.ctx) : noAnswer(t, desc));
  });
  io.doc?.(doc({ kind: 'Status', target: 'drain', workflowId: t.id, state: 'running', webUi: webUiLink(t.id), status: s }));
  io.out(`${t.id} (Web UI: ${webUiLink(t.id)})`);
  io.out(`${s.phase}: ${drainMessage(s)}`);
  return 0;
}

/** Follows a drain until it ends: 0 when the node is left empty; a CliError when it failed or left pods. */
export async function followDrain(session: Session, t: Target & { kind: 'drain' }, io: Io): Promise<number> {
  const client = await session.client();
  let last = '';
  let waiting = '';
  const note = (line: string) => {
    if (line !== waiting) io.out(line);
    waiting = line;
  };
  for (;;) {
    const desc = await describe(client, t.id);
    if (!desc) {
      const why = await notStarted(client, t);
      if (!why) throw new CliError(`no workflow ${t.id} in Temporal namespace ${session.settings.namespace}`);
      const owner = await describe(client, drainOwner(t)!);
      if (owner?.status.name !== 'RUNNING') throw new CliError(`${why}, and ${t.cycleId ? 'the cycle' : 'the coordinator'} has ended`);
      note(`waiting: ${why}`);
    } else if (desc.status.name === 'RUNNING') {
      const s = await queryDrain(client, t.id).catch(() => undefined);
      if (!s) note(`waiting: ${noAnswer(t, desc)}`);
      else {
        const line = `${s.phase}: ${drainMessage(s)}`;
        if (line !== last) io.out(`[${new Date().toISOString()}] ${line}`);
        last = line;
      }
    } else {
      const end = await closedDrain(session, client, t, desc);
      if (!end.ok) throw new CliError(end.line);
      io.out(end.line);
      return 0;
    }
    await sleep(POLL_MS);
  }
}

/** Whether a worker has polled the task queue lately (the server remembers pollers for minutes). */
export async function workerPolls(client: Client, namespace: string, taskQueue: string): Promise<boolean> {
  const r = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } });
  return (r.pollers ?? []).length > 0;
}

/**
 * `slipway drain <node>`: drain/<node>, started only for a node that exists, attached to when it
 * runs, refused (without --again) when it has finished. A cycle draining the node is followed instead.
 */
export async function drainCommand(session: Session, cmd: { node: string; again: boolean; follow: boolean }, io: Io): Promise<number> {
  const { node } = cmd;
  const found = await session.read(`node ${node}`, (k) => k.core.readNode({ name: node }));
  if (!found) throw new CliError(`node ${node} not found in the cluster at ${session.ctx.kubeServer ?? '?'}; nothing to drain`);
  // NM-7.7: a maintenance's node is drained by the maintenance (the reverse is not guarded in v1).
  const holders = found.metadata?.annotations?.[HELD_BY_ANNOTATION];
  if (holders) throw new CliError(`node ${node} is held by NodeMaintenance ${holders}; steer it through the maintenance`);
  const client = await session.client();
  const id = drainWorkflowId(node);
  const follow = (t: Target & { kind: 'drain' }) => (cmd.follow ? followDrain(session, t, io) : Promise.resolve(0));
  const own: Target & { kind: 'drain' } = { kind: 'drain', id, node };

  // Never a second drain of a node that a drain (or a cycle about to drain it) already has.
  const current = await drainOfNode(session, node).catch((err: unknown) => {
    if (err instanceof NoDrainError) return undefined;
    throw err;
  });
  if (current) {
    if ((await describe(client, current.id))?.status.name === 'RUNNING') {
      io.out(`${current.id} is already draining ${node}; following it: ${webUiLink(current.id)}`);
      return follow(current);
    }
    if (current.cycleId && (await describe(client, current.cycleId))?.status.name === 'RUNNING') {
      io.out(`${node} is being cycled by ${current.cycleId}, which drains it as ${current.id}; following that: ${webUiLink(current.cycleId)}`);
      return follow(current);
    }
  }
  const refuse = async (desc: WorkflowExecutionDescription): Promise<never> => {
    const { line } = await closedDrain(session, client, own, desc);
    throw new CliError(`${line}; to drain ${node} again, run: slipway drain ${node} --again`);
  };
  const prev = await describe(client, id);
  if (prev && !cmd.again) await refuse(prev);

  const group = found.metadata?.labels?.[NODE_GROUP_LABEL];
  try {
    await client.workflow.start(drainWorkflow, {
      taskQueue: session.settings.taskQueue,
      workflowId: id,
      // A finished drain is drained again only when asked (--again); a running one is attached to.
      workflowIdReusePolicy: cmd.again ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
      args: [{ nodeName: node }],
      typedSearchAttributes: [{ key: NodesAttr, value: [node] }, ...(group ? [{ key: NodeGroupAttr, value: group }] : [])],
      staticSummary: `drain ${node}`,
    });
    io.out(`started ${id}: ${webUiLink(id)}`);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    const now = await describe(client, id);
    if (now && now.status.name !== 'RUNNING') await refuse(now); // finished in between
    io.out(`${id} is already running; following it: ${webUiLink(id)}`);
  }
  if (!(await workerPolls(client, session.settings.namespace, session.settings.taskQueue))) {
    io.err(`note: no worker polls task queue ${session.settings.taskQueue} at ${session.settings.address}; the drain proceeds once one does`);
  }
  return follow(own);
}
