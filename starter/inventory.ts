// Runs the inventory workflow and renders its result for a terminal.
import type { Client } from '@temporalio/client';
import { inventoryWorkflow } from '../workflows/index.js';
import type { InventoryResult } from '../workflows/inventory.js';

export async function runInventory(client: Client, taskQueue: string, workflowId: string, selector?: string): Promise<InventoryResult> {
  return client.workflow.execute(inventoryWorkflow, {
    taskQueue,
    workflowId,
    args: [selector],
    staticSummary: `inventory of nodes${selector ? ` matching ${selector}` : ''}`,
  });
}

export function renderInventory(r: InventoryResult): string {
  const rows = Object.entries(r.groups).map(
    ([g, v]) => `  ${g.padEnd(24)} ${String(v.total).padStart(5)} ${String(v.ready).padStart(6)} ${String(v.cordoned).padStart(9)}`,
  );
  return [`  ${'NODE GROUP'.padEnd(24)} ${'NODES'.padStart(5)} ${'READY'.padStart(6)} ${'CORDONED'.padStart(9)}`, ...rows].join('\n');
}
