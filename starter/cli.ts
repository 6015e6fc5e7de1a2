// slipway: the command-line client. Talks to Temporal with the worker's settings.
//   slipway inventory [--selector <label selector>]   list nodes per node group, via a workflow
import { webUiLink, temporalSettings } from '../worker/config.js';
import { connectClient } from './client.js';
import { renderInventory, runInventory } from './inventory.js';

const usage = 'usage: slipway inventory [--selector <label selector>]';

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd !== 'inventory') {
    console.error(usage);
    return 2;
  }
  const i = rest.indexOf('--selector');
  const selector = i >= 0 ? rest[i + 1] : undefined;
  const settings = temporalSettings();
  const client = await connectClient(settings);
  const workflowId = `inventory-${Date.now()}`;
  const result = await runInventory(client, settings.taskQueue, workflowId, selector);
  console.log(renderInventory(result));
  console.log(`workflow: ${webUiLink(workflowId)}`);
  await client.connection.close();
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
