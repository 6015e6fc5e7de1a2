// npm run bench: every benchmark, each printing its figures. SLIPWAY_BENCH=drain|cycle|bridge|maintenance|maintenance-bridge|scale runs one.
import { execFileSync } from 'node:child_process';
import { createKube } from '../activities/kube.js';
import { deleteNodeGroups } from '../stack/kwok/nodes.js';

/**
 * Each benchmark starts from a quiet cluster: no namespace of an earlier run still deleting its pods,
 * no fake nodes left by tests or earlier runs, and a
 * kwok that has forgotten them (0.7 keeps heartbeating nodes whose deletion it missed, and its
 * leases then fight the garbage collector: load that would skew the figures).
 */
async function quietCluster(): Promise<void> {
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

const only = process.env.SLIPWAY_BENCH;
for (const name of ['drain', 'cycle', 'bridge', 'maintenance', 'maintenance-bridge', 'scale'] as const) {
  if (only && only !== name) continue;
  if (name !== 'scale') await quietCluster(); // scale runs on a dev server of its own, with stubs
  await import(`./${name}.js`);
}
