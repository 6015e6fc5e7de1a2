// Bundles the workflows once for production (dist/workflow-bundle.js), so a worker starts
// without running webpack. The worker picks the bundle up when it is there.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from './worker.js';

const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPath() });
const out = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
await writeFile(out, code);
console.log(`workflow bundle: ${out} (${(code.length / 1024).toFixed(0)} KiB)`);
