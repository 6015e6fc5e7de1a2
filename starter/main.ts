// The main job on the embedded default: with the local stack up (npm start brings it up), make
// sure a node group of fake nodes exists, run a worker in this process, run the inventory
// workflow through Temporal, and print what it found with the Web UI link.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createKube } from '../activities/kube.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { temporalSettings, webUiLink } from '../worker/config.js';
import { createWorker } from '../worker/worker.js';
import { connectClient } from './client.js';
import { renderInventory, runInventory } from './inventory.js';

// Keep the terminal for the job's own output; the worker's INFO lines go nowhere here.
Runtime.install({ logger: new DefaultLogger('WARN') });
const settings = temporalSettings();
const kube = createKube();
const group = process.env.SLIPWAY_DEMO_GROUP ?? 'workers';
const names = await ensureFakeNodeGroup(kube.core, group, Number(process.env.SLIPWAY_DEMO_NODES ?? 3));
console.log(`node group ${group}: ${names.length} kwok nodes Ready`);

const { worker, connection } = await createWorker({ deps: { kube }, settings });
const client = await connectClient(settings);
const workflowId = `inventory-${new Date().toISOString().replace(/[:.]/g, '-')}`;
const result = await worker.runUntil(runInventory(client, settings.taskQueue, workflowId));
console.log(renderInventory(result));
console.log(`workflow ${workflowId}: ${webUiLink(workflowId)}`);
await client.connection.close();
await connection.close();
