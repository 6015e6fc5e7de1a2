// The CRD bridge process (`node dist/starter/bridge/main.js`): turns CycleNodeRequests into cycle
// workflows and NodeMaintenances into maintenance workflows, and mirrors their state back into status. Several replicas may run; a Lease elects the
// one that acts. SIGINT/SIGTERM are handled from the first line (as PID 1 Node has no default action
// for them): while waiting for the servers they exit at once; once running they stop it cleanly (the
// lease is released for the next replica), and a second signal exits at once. Logs: shared/log.ts.
//
// Environment: the worker's (KUBECONFIG, TEMPORAL_*, SLIPWAY_TASK_QUEUE), plus
//   SLIPWAY_WATCH_NAMESPACE   only this namespace's requests (default: all; NodeMaintenances are cluster-scoped)
//   SLIPWAY_ALLOWED_NAMESPACES  comma-separated: requests elsewhere are refused with an Event (default: all watched)
//   SLIPWAY_LEADER_NAMESPACE  the Lease's namespace (default: the pod's namespace in a cluster, else default)
//   SLIPWAY_NODE_MAINTENANCES false: CycleNodeRequests only (an install without cluster-wide NodeMaintenance rights)
//   SLIPWAY_NODE_GROUPS       false: no NodeGroup drift observers (an install without NodeGroup rights)
//   SLIPWAY_NODE_DISRUPTION_BUDGETS false: NodeDisruptionBudgets' status only as holders write it (an install without their rights)
//   SLIPWAY_PROBE_PORT        serve /healthz, /readyz and /metrics on this port (ready: standing by, or leading with synced caches)
//   SLIPWAY_BRIDGE_IDENTITY   this replica's Lease identity, unique per replica (the pod's name): a restart renews at once
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { apiserverAnswers, apiserverOf, createKube, type Kube } from '../../kube/client.js';
import { probePortFromEnv, serveProbes, type Readiness } from '../../shared/probes.js';
import { untilReachable } from '../../shared/retry.js';
import { temporalSettings, type TemporalSettings } from '../../shared/temporal.js';
import { connectClient } from '../client.js';
import { Bridge, type BridgeSettings } from './bridge.js';
import { runWhileLeading } from '../../kube/controller/term.js';
import { emptyStats, type BridgeStats } from './kit.js';
import { setLeaderCheck } from './metrics.js';
import { bridgeRegistry, servedRegistry } from '../../shared/metrics.js';
import { lineLog, logger, type Log } from '../../shared/log.js';

export const LEASE_NAME = 'slipway-bridge';
const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The bridge's settings (bridge.ts BridgeSettings; namespace and allowedNamespaces default from the environment), its servers and its Lease. */
export interface StartBridgeOptions extends BridgeSettings {
  kube?: Kube;
  /** A Temporal client (not closed by stop()); by default one is connected from `settings`. */
  client?: Client;
  settings?: TemporalSettings;
  /** Task queue of the workflows it starts (default: settings.taskQueue). */
  taskQueue?: string;
  leaseNamespace?: string;
  leaseName?: string;
  identity?: string;
  leaseDurationSeconds?: number;
  renewIntervalMs?: number;
  retryIntervalMs?: number;
  renewDeadlineMs?: number;
  /** One line per action (default: the process's logger, component bridge). */
  log?: Log;
}

export interface RunningBridge {
  readonly identity: string;
  /** Whether this replica leads (and so reconciles) now. */
  isLeader(): boolean;
  /** Not leading (standing by), or leading with every cache synced. */
  readiness(): Readiness;
  /** What this replica did, summed over its leadership terms. */
  readonly stats: BridgeStats;
  stop(): Promise<void>;
}

export function defaultLeaseNamespace(env: Record<string, string | undefined> = process.env): string {
  if (env.SLIPWAY_LEADER_NAMESPACE) return env.SLIPWAY_LEADER_NAMESPACE;
  if (existsSync(SA_NAMESPACE_FILE)) return readFileSync(SA_NAMESPACE_FILE, 'utf8').trim() || 'default';
  return 'default';
}

/**
 * SLIPWAY_BRIDGE_IDENTITY, unique per replica (in a cluster the pod's name, from the downward API),
 * lets a restarted replica renew the Lease it held at once instead of waiting for it to lapse (15 s:
 * what a bridge crash cost in the chaos runner). Without it, every process is a new candidate.
 */
export const defaultIdentity = (env: Record<string, string | undefined> = process.env) =>
  env.SLIPWAY_BRIDGE_IDENTITY || `${hostname()}_${process.pid}_${randomBytes(4).toString('hex')}`;

/** Runs leader election and, while leading, the bridge. */
export async function startBridge(opts: StartBridgeOptions = {}): Promise<RunningBridge> {
  const log = opts.log ?? lineLog(logger('bridge'));
  const settings = opts.settings ?? temporalSettings();
  const kube = opts.kube ?? createKube();
  const ownClient = !opts.client;
  const client = opts.client ?? (await connectClient(settings));
  const taskQueue = opts.taskQueue ?? settings.taskQueue;
  const namespace = opts.namespace ?? (process.env.SLIPWAY_WATCH_NAMESPACE || undefined);
  const allowedNamespaces = opts.allowedNamespaces ?? allowedFromEnv(process.env.SLIPWAY_ALLOWED_NAMESPACES);
  const stats = emptyStats();
  const leaseNamespace = opts.leaseNamespace ?? defaultLeaseNamespace();
  const leaseName = opts.leaseName ?? LEASE_NAME;
  const leading = runWhileLeading({
    coord: kube.config.makeApiClient(CoordinationV1Api),
    namespace: leaseNamespace,
    name: leaseName,
    identity: opts.identity ?? defaultIdentity(),
    leaseDurationSeconds: opts.leaseDurationSeconds,
    renewIntervalMs: opts.renewIntervalMs,
    retryIntervalMs: opts.retryIntervalMs,
    renewDeadlineMs: opts.renewDeadlineMs,
    log,
    newTerm: (isLeader) =>
      new Bridge({ ...opts, kube, client, taskQueue, namespace, allowedNamespaces, isLeader, stats, log }),
    onStarted: () =>
      log(`reconciling CycleNodeRequests in ${namespace ?? 'all namespaces'}${opts.maintenances === false ? '' : ' and NodeMaintenances (cluster-scoped)'}${allowedNamespaces ? ` (acting only for ${allowedNamespaces.join(', ')})` : ''}, task queue ${taskQueue}`),
  });
  setLeaderCheck(() => leading.isLeader());
  log(`identity ${leading.identity}; lease ${leaseNamespace}/${leaseName}; Temporal ${settings.address} namespace ${settings.namespace}`, { kind: 'Lease', namespace: leaseNamespace, name: leaseName, identity: leading.identity });

  return {
    identity: leading.identity,
    isLeader: () => leading.isLeader(),
    readiness: () => leading.readiness(),
    stats,
    async stop() {
      await leading.stop();
      if (ownClient) await client.connection.close();
    },
  };
}

async function main(): Promise<void> {
  const root = logger('bridge');
  const log = lineLog(root);
  // Installed before anything connects: a signal while waiting for the servers exits at once.
  let running: { stop(): Promise<void> } | undefined;
  let exiting = false;
  const shutdown = (sig: NodeJS.Signals) => {
    if (!running || exiting) {
      log(`${sig}: exiting`, { signal: sig });
      process.exit(0);
    }
    exiting = true;
    log(`${sig}: stopping`, { signal: sig });
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        root.error({ err }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // Started before the apiserver or Temporal answers: wait (one line per try), not ready meanwhile.
  let state: Readiness = { ready: false, reason: 'starting' };
  let bridge: RunningBridge | undefined;
  // Once started, readiness is the bridge's own: standing by, or leading with synced caches.
  const readiness = (): Readiness => (bridge && state.ready ? bridge.readiness() : state);
  const port = probePortFromEnv();
  const probes = port === undefined ? undefined : await serveProbes(port, () => readiness(), servedRegistry(bridgeRegistry));
  if (probes) log(`probes on :${probes.port} (/healthz, /readyz, /metrics)`);
  const kube = createKube();
  const settings = temporalSettings();
  state = { ready: false, reason: `waiting for the kube-apiserver at ${apiserverOf(kube)}` };
  await untilReachable(`kube-apiserver at ${apiserverOf(kube)}`, () => apiserverAnswers(kube), { log });
  state = { ready: false, reason: `waiting for Temporal at ${settings.address}` };
  const client = await untilReachable(`Temporal at ${settings.address}`, () => connectClient(settings), { log });
  const started = (bridge = await startBridge({ kube, client, settings, log, maintenances: process.env.SLIPWAY_NODE_MAINTENANCES !== 'false', nodeGroups: process.env.SLIPWAY_NODE_GROUPS !== 'false', budgets: process.env.SLIPWAY_NODE_DISRUPTION_BUDGETS !== 'false' }));
  state = { ready: true, reason: 'electing' };
  running = {
    stop: async () => {
      state = { ready: false, reason: 'stopping' };
      await started.stop();
      await client.connection.close();
      await probes?.close();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    logger('bridge').fatal({ err }, 'bridge failed');
    process.exit(1);
  });
}

/** SLIPWAY_ALLOWED_NAMESPACES: "a,b" → ["a", "b"]; unset or blank → undefined (every watched namespace). */
export function allowedFromEnv(value: string | undefined): string[] | undefined {
  const list = (value ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  return list.length ? list : undefined;
}
