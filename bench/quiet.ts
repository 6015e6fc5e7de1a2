// A quiet cluster before each benchmark (and between the cycle benchmark's runs).
import { execFileSync } from 'node:child_process';
import { createKube } from '../kube/client.js';
import { deleteNodeGroups } from '../stack/kwok/nodes.js';

/**
 * Each benchmark starts from a quiet cluster: no namespace of an earlier run still deleting its pods,
 * no fake nodes left by tests or earlier runs, and a
 * kwok that has forgotten them (0.7 keeps heartbeating nodes whose deletion it missed, and its
 * leases then fight the garbage collector: load that would skew the figures).
 */
export async function quietCluster(): Promise<void> {
  const kube = createKube();
  // An earlier benchmark's namespace may still be deleting its pods.
  for (let i = 0; i < 120; i++) {
    const ns = (await kube.core.listNamespace()).items.filter((n) => n.metadata!.name!.startsWith('bench-'));
    if (!ns.length) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  await deleteNodeGroups(kube.core, (g) => g.startsWith('it-') || g.startsWith('bench-'));
  execFileSync('bash', ['stack/stack.sh', 'restart', 'kwok'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await new Promise((r) => setTimeout(r, 3000));
}
