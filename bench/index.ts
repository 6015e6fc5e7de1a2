// npm run bench: every benchmark, each printing its figures. SLIPWAY_BENCH=drain|cycle|bridge|maintenance|maintenance-bridge|rollout|idle|scale|bridge-fleet runs one.
import { quietCluster } from './quiet.js';

const only = process.env.SLIPWAY_BENCH;
for (const name of ['drain', 'cycle', 'bridge', 'maintenance', 'maintenance-bridge', 'rollout', 'idle', 'scale', 'bridge-fleet'] as const) {
  if (only && only !== name) continue;
  if (name !== 'scale') await quietCluster(); // scale runs on a dev server of its own, with stubs
  await import(`./${name}.js`);
}
