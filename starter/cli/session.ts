// The connections a command needs, made when it first needs them (so `--help` and usage errors
// touch nothing), each failing fast with one line that names the address or the file.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { apiStatus, createKube, type Kube } from '../../kube/client.js';
import type { Logger } from '../../shared/log.js';
import { temporalSettings, type TemporalSettings } from '../../shared/temporal.js';
import { connectClient } from '../client.js';
import { grpcDebug, kubeDebug, kubeFields, workflowDebug } from './debug.js';
import { CliError } from './errors.js';
import { oneLine, type ErrorContext } from './explain.js';

/** Long enough for a real server across a WAN; short enough that a wrong address says so at once. */
const CONNECT_TIMEOUT = '3s';

export class Session {
  private kubeValue?: Kube;
  private clientValue?: Promise<Client>;

  constructor(
    readonly settings: TemporalSettings = temporalSettings(),
    private readonly env: Record<string, string | undefined> = process.env,
    /** --kubeconfig and --context. */
    private readonly kubeFlags: { kubeconfig?: string; context?: string } = {},
    /** The `cli` logger: at debug, the kubeconfig's choice and every Temporal and Kubernetes call. */
    readonly log?: Logger,
  ) {}

  private get debug(): Logger | undefined {
    return this.log?.isLevelEnabled('debug') ? this.log : undefined;
  }

  /** A failure the command reports in one line, with its stack (at debug). */
  failed(what: string, err: unknown): void {
    this.debug?.debug({ err }, what);
  }

  get ctx(): ErrorContext {
    return {
      temporalAddress: this.settings.address,
      temporalNamespace: this.settings.namespace,
      kubeServer: this.kubeValue?.config.getCurrentCluster()?.server,
    };
  }

  private kubeconfigPath(): string {
    return this.kubeFlags.kubeconfig || this.env.KUBECONFIG || join(homedir(), '.kube', 'config');
  }

  kube(): Kube {
    if (!this.kubeValue) {
      try {
        const kc = this.kubeConfig();
        if (this.debug) {
          this.debug.debug(kubeFields(kc, this.kubeconfigPath()), 'kubernetes settings');
          kubeDebug(kc, this.debug);
        }
        this.kubeValue = createKube(kc);
      } catch (err) {
        this.failed('kubeconfig', err);
        const e = err as NodeJS.ErrnoException;
        const source = this.kubeFlags.kubeconfig ? ' (--kubeconfig)' : this.env.KUBECONFIG ? ' (KUBECONFIG)' : '';
        if (e.code === 'ENOENT') throw new CliError(`kubeconfig ${e.path ?? this.kubeconfigPath()}${source} not found`);
        throw new CliError(`kubeconfig ${this.kubeconfigPath()}${source}: ${oneLine(err, this.ctx)}`);
      }
    }
    return this.kubeValue;
  }

  /** The kubeconfig as kubectl reads it: --kubeconfig over KUBECONFIG, --context over its current-context. */
  private kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    if (this.kubeFlags.kubeconfig) kc.loadFromFile(this.kubeFlags.kubeconfig);
    else kc.loadFromDefault();
    if (this.kubeFlags.context) {
      if (!kc.getContextObject(this.kubeFlags.context)) throw new CliError(`context ${this.kubeFlags.context} not found in kubeconfig ${this.kubeconfigPath()}`);
      kc.setCurrentContext(this.kubeFlags.context);
    }
    if (!kc.getCurrentCluster()) throw new CliError(`no Kubernetes cluster configured in ${this.kubeconfigPath()}`);
    return kc;
  }

  async client(): Promise<Client> {
    const log = this.debug;
    this.clientValue ??= connectClient(this.settings, { connectTimeout: CONNECT_TIMEOUT, grpc: log && [grpcDebug(log)], workflow: log && [workflowDebug(log)] }).catch((err: unknown) => {
      this.failed('temporal connect', err);
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new CliError(`cannot reach Temporal at ${this.settings.address} (--temporal-address, TEMPORAL_ADDRESS or the temporal CLI profile): ${why}`);
    });
    return this.clientValue;
  }

  /**
   * A read of one Kubernetes object: undefined when it does not exist; any other failure is one
   * line naming the object.
   */
  async read<T>(what: string, f: (kube: Kube) => Promise<T>): Promise<T | undefined> {
    const kube = this.kube();
    try {
      return await f(kube);
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      this.failed(`reading ${what}`, err);
      throw new CliError(`reading ${what}: ${oneLine(err, this.ctx)}`);
    }
  }

  async close(): Promise<void> {
    const c = await this.clientValue?.catch(() => undefined);
    await c?.connection.close();
  }
}
