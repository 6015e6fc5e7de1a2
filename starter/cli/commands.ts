// Each command, given parsed arguments and a session. Results go to stdout; errors are thrown as
// CliError (one line) and printed by main.
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { CycleNodeRequestSpec, type CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { NODE_GROUP, NodeGroupSpec } from '../../api/node-group-kind.js';
import { selectorToString } from '../../api/label-selector.js';
import { apiStatus } from '../../kube/client.js';
import { webUiLink } from '../../shared/temporal.js';
import { cycleWorkflowId, maintenanceNodeWorkflowId, parseWorkflowId } from '../../workflows/ids.js';
import { forceDeletePodSignal, retryNowSignal, skipPodSignal } from '../../workflows/messages.js';
import { callerIdentity } from '../client.js';
import { closedCycleMessage, createCycle, cycleSpec, dryRun, renderDryRun, followCycleId, queryCycle, renderCycle, type CycleArgs } from '../cycle-cli.js';
import { renderInventory, runInventory } from '../inventory.js';
import type { Command } from './args.js';
import { closedDrain, drainCommand, drainStatus, followDrain, workerPolls, type Io } from './drain.js';
import { CliError, UsageError } from './errors.js';
import { oneLine } from './explain.js';
import { doc } from './output.js';
import { setupTemporal, version } from './info.js';
import { isDnsSubdomain } from './refs.js';
import { maintenancePlan, maintenanceStatus, rolloutNodeDone, setRolloutPaused, setStage } from './maintenance.js';
import { describe, maintenanceWorkflowIdOf, resolveDrain, resolveTarget } from './resolve.js';
import type { Session } from './session.js';

type Of<K extends Command['cmd']> = Extract<Command, { cmd: K }>;

async function cycle(session: Session, c: Of<'cycle'>, io: Io): Promise<number> {
  // A NodeGroup of that name: its template (and its request namespace unless -n says otherwise), as kubectl-cycle.
  const group = await readNodeGroup(session, c.nodeGroup);
  const a: CycleArgs = {
    namespace: c.namespaceSet || !group ? c.namespace : group.requestNamespace,
    name: c.name ?? `${c.nodeGroup}-${Date.now().toString(36)}`,
    nodeGroup: c.nodeGroup,
    fromNodeGroup: group ? { name: c.nodeGroup, template: group.template } : undefined,
    nodes: c.nodes,
    concurrency: c.concurrency,
    method: c.method,
    provider: c.provider,
  };
  const spec = CycleNodeRequestSpec.safeParse(cycleSpec(a));
  if (!spec.success) throw new UsageError(`invalid request: ${spec.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ')}`, 'cycle');
  // Before anything is created: the namespace the request goes to must exist.
  const ns = await session.read(`namespace ${c.namespace}`, (k) => k.core.readNamespace({ name: c.namespace }));
  if (!ns) throw new CliError(`namespace ${c.namespace} not found in the cluster at ${session.ctx.kubeServer ?? '?'}; nothing created (create it, or choose another with -n)`);
  const what = `CycleNodeRequest ${a.namespace}/${a.name}`;
  if (c.dryRun) {
    const plan = await dryRun(session.kube(), a).catch((err: unknown) => Promise.reject(new CliError(`${what} (dry run): ${oneLine(err, session.ctx)}`)));
    io.doc?.(doc({ kind: 'CycleDryRun', request: { namespace: a.namespace, name: a.name }, ...plan }));
    io.out(renderDryRun(a, plan));
    return 0;
  }
  // A group with no node would only fail later in status: say so now, and create nothing.
  const selector = selectorToString(spec.data.selector);
  const nodes = await session.read(`nodes ${selector}`, (k) => k.core.listNode({ labelSelector: selector, limit: 1 }));
  if (!nodes?.items.length) throw new CliError(`${group ? 'NodeGroup' : 'node group'} ${c.nodeGroup}: no node has ${selector}; nothing created (kubectl get nodes -l ${selector})`);
  const client = c.follow ? await session.client() : undefined; // unreachable Temporal: say so before creating anything
  const { uid } = await createCycle(session.kube(), a).catch((err: unknown) => {
    if (apiStatus(err) === 409) throw new CliError(`${what} already exists`);
    if (apiStatus(err) === 404) throw new CliError(`the CycleNodeRequest CRD is not installed in the cluster at ${session.ctx.kubeServer ?? '?'} (npm run crds:install)`);
    throw new CliError(`creating ${what}: ${oneLine(err, session.ctx)}`);
  });
  io.out(`created cyclenoderequest ${a.namespace}/${a.name}`);
  if (!client) return 0;
  return followCycleId(client, cycleWorkflowId({ namespace: a.namespace, name: a.name, uid }), io);
}

/** The NodeGroup named so, valid (its template and request namespace), or undefined when there is none (or its CRD is not installed). */
async function readNodeGroup(session: Session, name: string): Promise<{ template: CycleNodeRequestSpecInput; requestNamespace: string } | undefined> {
  if (!isDnsSubdomain(name)) return undefined;
  const obj = (await session.read(`NodeGroup ${name}`, (k) => k.config.makeApiClient(CustomObjectsApi).getClusterCustomObject({ group: NODE_GROUP.group, version: NODE_GROUP.version, plural: NODE_GROUP.plural, name }))) as
    | { spec?: unknown }
    | undefined;
  if (!obj) return undefined;
  const parsed = NodeGroupSpec.safeParse(obj.spec ?? {});
  if (!parsed.success) throw new CliError(`NodeGroup ${name} is invalid: ${parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ')}; nothing created`);
  return { template: (obj.spec as { template: CycleNodeRequestSpecInput }).template, requestNamespace: parsed.data.requestNamespace };
}

async function requestStatus(session: Session, id: string, io: Io): Promise<number> {
  const client = await session.client();
  const desc = await describe(client, id);
  if (!desc) throw new CliError(`no workflow ${id} in Temporal namespace ${session.settings.namespace} yet (the bridge starts it: is it running?)`);
  // A document lists every node (paged); the text keeps the bounded list with counts per phase.
  const s = await queryCycle(client, id, { everyNode: Boolean(io.doc) });
  const running = desc.status.name === 'RUNNING';
  if (!s && running) throw new CliError(`${id} is running, but no worker answered within 10 s: is a worker polling task queue ${desc.taskQueue}?`);
  io.doc?.(doc({ kind: 'Status', target: 'request', workflowId: id, state: desc.status.name.toLowerCase(), closedAt: desc.closeTime?.toISOString(), webUi: webUiLink(id), status: s, message: s ? undefined : ((await closedCycleMessage(client, id)) ?? desc.status.name) }));
  io.out(`${id} (${running ? 'running' : `${desc.status.name.toLowerCase()} at ${desc.closeTime?.toISOString() ?? '?'}`}; Web UI: ${webUiLink(id)})`);
  io.out(s ? renderCycle(s, id) : ((await closedCycleMessage(client, id)) ?? desc.status.name));
  return 0;
}

async function status(session: Session, c: Of<'status'>, io: Io): Promise<number> {
  const t = await resolveTarget(session, c.ref);
  if (t.kind === 'maintenance') return maintenanceStatus(session, t, io);
  return t.kind === 'request' ? requestStatus(session, t.id, io) : drainStatus(session, t, io);
}

async function follow(session: Session, c: Of<'follow'>, io: Io): Promise<number> {
  const t = await resolveTarget(session, c.ref);
  if (t.kind === 'drain') return followDrain(session, t, io);
  if (t.kind === 'maintenance') throw new CliError(`${t.id} is a maintenance: its status is "slipway maintenance ${t.name} status"`);
  return followCycleId(await session.client(), t.id, io);
}

async function signal(session: Session, c: Of<'skip-pod' | 'force-delete-pod' | 'retry-now'>, io: Io): Promise<number> {
  const pod = 'pod' in c ? c.pod : undefined;
  const podKey = pod && `${pod.namespace}/${pod.name}`;
  let read: V1Pod | undefined;
  const readPod = async (): Promise<V1Pod> => {
    read ??= await session.read(`pod ${podKey}`, (k) => k.core.readNamespacedPod({ namespace: pod!.namespace, name: pod!.name }));
    if (!read) throw new CliError(`pod ${podKey} not found`);
    return read;
  };
  let t = await resolveDrain(session, c.ref, c.node, pod ? async () => (await readPod()).spec?.nodeName ?? '' : undefined);
  // A maintenance's retry-now goes to the node's coordinator: it passes it to a running drain, and
  // starts a new one after a drain that failed (podEvictionTimeout policy Fail).
  if (c.cmd === 'retry-now' && parseWorkflowId(t.id)?.kind === 'maintenanceDrain') t = { ...t, id: maintenanceNodeWorkflowId(t.node) };
  const client = await session.client();
  const desc = await describe(client, t.id);
  if (!desc) {
    if (t.cycleId) throw new CliError(`the drain ${t.id} of node ${t.node} has not started (or the node is not in this cycle)`);
    if (t.coordinatorId) throw new CliError(`the drain ${t.id} of node ${t.node} has not started (no maintenance holding ${t.node} is in stage Drain yet)`);
    throw new CliError(`no workflow ${t.id} in Temporal namespace ${session.settings.namespace}`);
  }
  if (desc.status.name !== 'RUNNING') {
    const { line } = await closedDrain(session, client, t, desc);
    throw new CliError(`nothing to ${c.cmd}: ${line}`);
  }
  if (pod) {
    const on = (await readPod()).spec?.nodeName;
    if (on !== t.node) throw new CliError(`pod ${podKey} is ${on ? `on node ${on}` : 'not scheduled'}, not on ${t.node} (which ${t.id} drains)`);
  }
  const handle = client.workflow.getHandle(t.id);
  if (c.cmd === 'retry-now') await handle.signal(retryNowSignal);
  else await handle.signal(c.cmd === 'skip-pod' ? skipPodSignal : forceDeletePodSignal, { ...pod!, reason: c.reason, requestedBy: callerIdentity() });
  io.out(`sent ${c.cmd}${podKey ? ` ${podKey}` : ''} to ${t.id}`);
  return 0;
}

async function inventory(session: Session, c: Of<'inventory'>, io: Io): Promise<number> {
  if (c.selector !== undefined) {
    // The apiserver parses selectors; a bad one would have the workflow's activity retry forever.
    await session.kube().core.listNode({ labelSelector: c.selector, limit: 1 }).catch((err: unknown) => {
      if (apiStatus(err) === 400) throw new UsageError(`invalid --selector "${c.selector}": ${oneLine(err, session.ctx).replace(/^.*?: 400 /, '')}`, 'inventory');
      throw new CliError(`checking --selector: ${oneLine(err, session.ctx)}`);
    });
  }
  const client = await session.client();
  const { taskQueue, namespace, address } = session.settings;
  if (!(await workerPolls(client, namespace, taskQueue))) throw new CliError(`no worker polls task queue ${taskQueue} at ${address}: start one (npm run worker)`);
  const result = await runInventory(client, taskQueue, `inventory-${Date.now()}`, c.selector);
  io.doc?.(doc({ kind: 'Inventory', selector: c.selector, groups: result.groups }));
  io.out(renderInventory(result));
  return 0;
}

export async function execute(session: Session, c: Exclude<Command, { cmd: 'help' | 'completion' }>, io: Io): Promise<number> {
  switch (c.cmd) {
    case 'version':
      return version(session, io);
    case 'setup':
      return setupTemporal(session, io);
    case 'cycle':
      return cycle(session, c, io);
    case 'follow':
      return follow(session, c, io);
    case 'status':
      return status(session, c, io);
    case 'drain':
      return drainCommand(session, c, io);
    case 'inventory':
      return inventory(session, c, io);
    case 'skip-pod':
    case 'force-delete-pod':
    case 'retry-now':
      return signal(session, c, io);
    case 'maintenance':
      if (c.action === 'status') return maintenanceStatus(session, { kind: 'maintenance', id: await maintenanceWorkflowIdOf(session, c.name), name: c.name }, io);
      if (c.action === 'plan') return maintenancePlan(session, c.name, io);
      if (c.action === 'done') return rolloutNodeDone(session, { name: c.name, node: c.node }, io);
      if (c.action === 'pause' || c.action === 'resume') return setRolloutPaused(session, { name: c.name, paused: c.action === 'pause' }, io);
      return setStage(session, { name: c.name, stage: c.stage, reason: c.reason }, io);
  }
}
