#!/usr/bin/env node
// slipway (also kubectl-slipway, the kubectl plugin): the command-line client (starter/cli/). Talks
// to Temporal with Temporal's own client settings (flags, TEMPORAL_*, a temporal CLI profile) and
// to Kubernetes as kubectl does (--kubeconfig, KUBECONFIG, --context).
// --log-level / -v set SLIPWAY_LOG_LEVEL before any other module is loaded (the logger reads it).
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a === '--') break;
  if (a === '-v' || a === '--debug') process.env.SLIPWAY_LOG_LEVEL = 'debug';
  else if (a.startsWith('--log-level=')) process.env.SLIPWAY_LOG_LEVEL = a.slice('--log-level='.length);
  else if (a === '--log-level' && argv[i + 1] !== undefined) process.env.SLIPWAY_LOG_LEVEL = argv[i + 1];
}
const { run } = await import('./cli/main.js');
process.exitCode = await run(argv);
