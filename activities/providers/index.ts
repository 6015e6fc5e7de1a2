// The node-group providers by name. The AWS one is built on first use, so a worker that only
// ever uses kwok needs no AWS configuration at all.
import { createAws, type Aws } from '../aws.js';
import type { Kube } from '../kube.js';
import { createAwsProvider } from './aws.js';
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
  const kwok = createKwokProvider(kube);
  let awsProvider: NodeGroupProvider | undefined;
  return {
    kwok,
    get aws() {
      awsProvider ??= createAwsProvider(typeof aws === 'function' ? aws() : (aws ?? createAws()));
      return awsProvider;
    },
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
