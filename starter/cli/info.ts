// `slipway version` and `slipway setup temporal`: what runs where, and Temporal made ready for Slipway.
import { VersionApi } from '@kubernetes/client-node';
import { buildInfo } from '../../shared/metrics.js';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';
import type { Io } from './drain.js';
import { oneLine } from './explain.js';
import { doc, type VersionDocument } from './output.js';
import type { Session } from './session.js';

const why = (err: unknown, session: Session) => {
  session.failed('version', err);
  return { error: oneLine(err, session.ctx) };
};

/** slipway_build_info's labels from a worker's /metrics (SLIPWAY_WORKER_METRICS_URL), when set. */
async function workerBuild(env: Record<string, string | undefined>): Promise<{ version: string; revision: string } | undefined> {
  const url = env.SLIPWAY_WORKER_METRICS_URL;
  if (!url) return undefined;
  const text = await (await fetch(url, { signal: AbortSignal.timeout(3000) })).text();
  const line = text.split('\n').find((l) => l.startsWith('slipway_build_info{'));
  const label = (k: string) => (line ? new RegExp(`${k}="([^"]*)"`).exec(line)?.[1] : undefined);
  return line ? { version: label('version') ?? 'unknown', revision: label('revision') ?? 'unknown' } : undefined;
}

export async function version(session: Session, io: Io, env: Record<string, string | undefined> = process.env): Promise<number> {
  const b = buildInfo();
  const d: Omit<VersionDocument, 'apiVersion'> = { kind: 'Version', cli: { version: b.version, node: b.node } };
  const { address, namespace, taskQueue } = session.settings;
  await Promise.all([
    (async () => {
      try {
        const client = await session.client();
        const info = await client.workflowService.getSystemInfo({});
        d.temporal = { address, namespace, serverVersion: info.serverVersion ?? undefined };
        const q = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } });
        d.worker = { taskQueue, pollers: [...new Set((q.pollers ?? []).map((p) => p.identity ?? '?'))], build: await workerBuild(env).catch(() => undefined) };
      } catch (err) {
        d.temporal = why(err, session);
      }
    })(),
    (async () => {
      try {
        const v = await session.kube().config.makeApiClient(VersionApi).getCode();
        d.apiServer = { gitVersion: v.gitVersion, platform: v.platform };
      } catch (err) {
        d.apiServer = why(err, session);
      }
    })(),
  ]);
  io.doc?.(doc(d));
  const err = (x: object | undefined) => (x && 'error' in x ? `unreachable (${x.error})` : undefined);
  io.out(`slipway ${b.version} (Node.js ${b.node})`);
  io.out(`Temporal: ${err(d.temporal) ?? (d.temporal && 'serverVersion' in d.temporal ? `${d.temporal.serverVersion ?? '?'} at ${address}, namespace ${namespace}` : '?')}`);
  if (d.worker && 'pollers' in d.worker) {
    const build = d.worker.build ? `build ${d.worker.build.version} (${d.worker.build.revision})` : 'build unknown (set SLIPWAY_WORKER_METRICS_URL to a worker\'s /metrics)';
    io.out(`Worker: ${d.worker.pollers.length ? `${d.worker.pollers.join(', ')} polling ${taskQueue}; ${build}` : `none polling task queue ${taskQueue}`}`);
  }
  io.out(`Kubernetes API server: ${err(d.apiServer) ?? (d.apiServer && 'gitVersion' in d.apiServer ? `${d.apiServer.gitVersion} (${d.apiServer.platform})` : '?')}`);
  return 0;
}

/** Registers Slipway's search attributes in the namespace; ones already there are fine. */
export async function setupTemporal(session: Session, io: Io): Promise<number> {
  const client = await session.client();
  const { namespace } = session.settings;
  const have = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = ALL_SEARCH_ATTRIBUTES.filter((a) => !(a.name in (have.customAttributes ?? {})));
  if (missing.length) {
    const { encodeSearchAttributeIndexedValueType } = await import('@temporalio/common/lib/search-attributes.js');
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((a) => [a.name, encodeSearchAttributeIndexedValueType(a.type)!])),
    }).catch((err: unknown) => {
      if (!/already exists/i.test(String((err as Error).message))) throw err; // registered meanwhile
    });
  }
  for (const a of ALL_SEARCH_ATTRIBUTES) io.out(`search attribute ${a.name} (${a.type}): ${missing.includes(a) ? 'registered' : 'already registered'} in namespace ${namespace}`);
  return 0;
}
