// A read-only workflow: which nodes are there, per group, and are they Ready and schedulable.
import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Inventory } from '../activities/inventory.js';

const { listNodes } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
  summary: 'list nodes',
});

export interface InventoryResult extends Inventory {
  groups: Record<string, { total: number; ready: number; cordoned: number }>;
}

export async function inventoryWorkflow(labelSelector?: string): Promise<InventoryResult> {
  const { nodes } = await listNodes(labelSelector);
  const groups: InventoryResult['groups'] = {};
  for (const n of nodes) {
    const g = (groups[n.nodeGroup ?? '(none)'] ??= { total: 0, ready: 0, cordoned: 0 });
    g.total++;
    if (n.ready) g.ready++;
    if (n.cordoned) g.cordoned++;
  }
  setCurrentDetails(
    ['| node group | nodes | ready | cordoned |', '|---|---|---|---|']
      .concat(Object.entries(groups).map(([k, v]) => `| ${k} | ${v.total} | ${v.ready} | ${v.cordoned} |`))
      .join('\n'),
  );
  return { nodes, groups };
}
