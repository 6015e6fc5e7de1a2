// The node-group providers by name. The AWS one is loaded on first use: a worker that only ever
// uses kwok needs no AWS configuration, and does not pay the ~100 MB the AWS SDK takes to load.
import type { Aws } from '../aws.js';
import type { Kube } from '../../kube/client.js';
import { createKwokProvider } from './kwok.js';
import type { NodeGroupProvider } from './types.js';

export type ProviderName = NodeGroupProvider['name'];
export const PROVIDER_NAMES: readonly ProviderName[] = ['kwok', 'aws'];

export interface ProviderDeps {
  kube: Kube;
  /** AWS clients, or a factory for them; defaults to createAws() (environment settings). */
  aws?: Aws | (() => Aws);
}

export function createProviders({ kube, aws }: ProviderDeps): Record<ProviderName, NodeGroupProvider> {
  return { kwok: createKwokProvider(kube), aws: lazyProvider('aws', async () => {
    const [{ createAwsProvider }, { createAws }] = await Promise.all([import('./aws.js'), import('../aws.js')]);
    return createAwsProvider(typeof aws === 'function' ? aws() : (aws ?? createAws()));
  }) };
}

/** A provider whose module is imported, and whose clients are built, on its first call. */
function lazyProvider(name: ProviderName, load: () => Promise<NodeGroupProvider>): NodeGroupProvider {
  let loaded: Promise<NodeGroupProvider> | undefined;
  const get = () => (loaded ??= load().catch((err: unknown) => {
    loaded = undefined; // a failed load (bad settings) is retried by the next call
    throw err;
  }));
  return {
    name,
    describeGroups: async (names) => (await get()).describeGroups(names),
    detachInstance: async (providerID, group) => (await get()).detachInstance(providerID, group),
    attachInstance: async (providerID, group) => (await get()).attachInstance(providerID, group),
    terminateInstance: async (providerID) => (await get()).terminateInstance(providerID),
    instancesExist: async (providerIDs) => (await get()).instancesExist(providerIDs),
    driftedInstances: async (group) => (await get()).driftedInstances(group),
  };
}

/** SLIPWAY_PROVIDER, or kwok (the local stack's default). An unknown name fails at startup, not mid-cycle. */
export function defaultProviderName(env: Record<string, string | undefined> = process.env): ProviderName {
  const name = env.SLIPWAY_PROVIDER || 'kwok';
  if (!(PROVIDER_NAMES as readonly string[]).includes(name)) {
    throw new Error(`SLIPWAY_PROVIDER=${name} is not a provider; use one of ${PROVIDER_NAMES.join(', ')}`);
  }
  return name as ProviderName;
}
