// slipway: the command-line client. Talks to Temporal with the worker's settings (TEMPORAL_ADDRESS, ...).
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { drainMessage } from '../workflows/drain/status.js';
import { drainWorkflow } from '../workflows/index.js';
import { drainStatusQuery, forceDeletePodSignal, retryNowSignal, skipPodSignal } from '../workflows/messages.js';
import { temporalSettings, webUiLink } from '../worker/config.js';
import { createKube } from '../activities/kube.js';
import { connectClient } from './client.js';
import { createCycle, dryRun, followCycle, type CycleArgs } from './cycle-cli.js';
import { renderInventory, runInventory } from './inventory.js';

const USAGE = `usage:
  slipway cycle <node-group> [--nodes a,b] [--concurrency N] [--method Drain|Wait] [--provider kwok|aws]
                [--name NAME] [-n NAMESPACE] [--dry-run] [--no-follow]
                                                     create a CycleNodeRequest and follow it live
  slipway follow <namespace>/<name>                  follow a CycleNodeRequest
  slipway inventory [--selector <label selector>]    nodes per node group, via a workflow
  slipway drain <node> [--no-follow]                 drain a node (workflow drain/<node>) and follow it
  slipway status <workflow-id>                       a drain's progress, in Cluster API's message shape
  slipway skip-pod <workflow-id> <ns/name> [--reason <text>]
  slipway force-delete-pod <workflow-id> <ns/name> [--reason <text>]
  slipway retry-now <workflow-id>`;

/** One drain per node: the same ID attaches to a drain that is already running. */
export const drainWorkflowId = (node: string) => `drain/${node}`;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/** <namespace>/<name> of a pod or a request. */
function pod(ref: string | undefined): { namespace: string; name: string } {
  const [namespace, name, ...rest] = (ref ?? '').split('/');
  if (!namespace || !name || rest.length) throw new UsageError(`expected <namespace>/<name>, got "${ref ?? ''}"`);
  return { namespace, name };
}

class UsageError extends Error {}

async function follow(client: Client, workflowId: string): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  let last = '';
  for (;;) {
    const desc = await handle.describe();
    if (desc.status.name === 'RUNNING') {
      const s = await handle.query(drainStatusQuery);
      const line = drainMessage(s);
      if (line !== last) console.log(`[${new Date().toISOString()}] ${s.phase}: ${line}`);
      last = line;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    try {
      const r = await handle.result();
      console.log(drainMessage(r.status));
      return 0;
    } catch (err) {
      const e = err as Error & { cause?: unknown };
      console.error(`drain ${desc.status.name}: ${e.cause instanceof Error ? e.cause.message : e.message}`);
      return 1;
    }
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  const settings = temporalSettings();
  const client = await connectClient(settings);
  try {
    switch (cmd) {
      case 'cycle': {
        const group = args[0];
        if (!group || group.startsWith('-')) throw new UsageError('cycle needs a node group');
        const method = option(args, 'method');
        if (method && method !== 'Drain' && method !== 'Wait') throw new UsageError('--method is Drain or Wait');
        const provider = option(args, 'provider');
        if (provider && provider !== 'kwok' && provider !== 'aws') throw new UsageError('--provider is kwok or aws');
        const a: CycleArgs = {
          namespace: option(args, 'n') ?? option(args, 'namespace') ?? 'default',
          name: option(args, 'name') ?? `${group}-${Date.now().toString(36)}`,
          nodeGroup: group,
          nodes: option(args, 'nodes')?.split(','),
          concurrency: option(args, 'concurrency') ? Number(option(args, 'concurrency')) : undefined,
          method: method as CycleArgs['method'],
          provider: provider as CycleArgs['provider'],
        };
        const kube = createKube();
        if (args.includes('--dry-run')) {
          console.log(await dryRun(kube, a));
          return 0;
        }
        const { uid } = await createCycle(kube, a);
        console.log(`created cyclenoderequest ${a.namespace}/${a.name}`);
        return args.includes('--no-follow') ? 0 : await followCycle(client, { namespace: a.namespace, name: a.name, uid });
      }
      case 'follow': {
        const { namespace, name } = pod(args[0]);
        const obj = (await createKube().config.makeApiClient((await import('@kubernetes/client-node')).CustomObjectsApi).getNamespacedCustomObject({
          group: 'slipway.dev', version: 'v1alpha1', plural: 'cyclenoderequests', namespace, name,
        })) as { metadata: { uid: string } };
        return await followCycle(client, { namespace, name, uid: obj.metadata.uid });
      }
      case 'inventory': {
        const result = await runInventory(client, settings.taskQueue, `inventory-${Date.now()}`, option(args, 'selector'));
        console.log(renderInventory(result));
        return 0;
      }
      case 'drain': {
        const node = args[0];
        if (!node) throw new UsageError('drain needs a node name');
        const workflowId = drainWorkflowId(node);
        try {
          await client.workflow.start(drainWorkflow, {
            taskQueue: settings.taskQueue,
            workflowId,
            args: [{ nodeName: node }],
            staticSummary: `drain ${node}`,
          });
          console.log(`started ${workflowId}: ${webUiLink(workflowId)}`);
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          console.log(`${workflowId} is already running; following it: ${webUiLink(workflowId)}`);
        }
        return args.includes('--no-follow') ? 0 : await follow(client, workflowId);
      }
      case 'status': {
        const s = await client.workflow.getHandle(need(args[0], 'workflow id')).query(drainStatusQuery);
        console.log(`${s.phase}: ${drainMessage(s)}`);
        return 0;
      }
      case 'skip-pod':
      case 'force-delete-pod': {
        const target = { ...pod(args[1]), reason: option(args, 'reason') };
        const signal = cmd === 'skip-pod' ? skipPodSignal : forceDeletePodSignal;
        await client.workflow.getHandle(need(args[0], 'workflow id')).signal(signal, target);
        console.log(`sent ${cmd} ${target.namespace}/${target.name}`);
        return 0;
      }
      case 'retry-now':
        await client.workflow.getHandle(need(args[0], 'workflow id')).signal(retryNowSignal);
        console.log('sent retry-now');
        return 0;
      default:
        throw new UsageError(cmd ? `unknown command "${cmd}"` : 'no command');
    }
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n${USAGE}`);
      return 2;
    }
    throw err;
  } finally {
    await client.connection.close();
  }
}

function need(v: string | undefined, what: string): string {
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

process.exitCode = await main(process.argv.slice(2));
