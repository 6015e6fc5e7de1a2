// slipway: the command-line client (starter/cli/). Talks to Temporal with the worker's settings
// (TEMPORAL_ADDRESS, ...) and to Kubernetes with KUBECONFIG.
import { run } from './cli/main.js';

process.exitCode = await run(process.argv.slice(2));
