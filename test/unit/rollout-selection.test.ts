// What a rolling maintenance's selection says about each node besides its partition: who else holds
// it (activities/maintenance/select.ts), read from the Node as the apiserver gives it. Named after
// docs/rolling-maintenance.md.
import type { V1Node } from '@kubernetes/client-node';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { HELD_BY_ANNOTATION } from '../../api/node-maintenance.js';
import { selectionOf } from '../../activities/maintenance/select.js';

const node = (name: string, annotations: Record<string, string> = {}): V1Node => ({ metadata: { name, labels: { pool: 'a', zone: 'z1' }, annotations } });
const SELECTOR = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In' as const, values: ['a'] }] }] };

test('RM-1.5 the selection names who else holds each node: other maintenances from held-by (not the asker), a cycle from its claim', () => {
  const nodes = [
    node('n1', { [HELD_BY_ANNOTATION]: 'kernel' }),
    node('n2', { [HELD_BY_ANNOTATION]: 'kernel,other' }),
    node('n3', { [CYCLED_BY]: 'default/cyc/uid-1' }),
    node('n4'),
  ];
  const s = selectionOf(SELECTOR, nodes, { partitionBy: 'zone', holder: 'kernel' });
  expect(s.elsewhere).toEqual({ n2: 'NodeMaintenance other', n3: 'CycleNodeRequest default/cyc' });
  expect(s.partitions).toEqual({ n1: 'z1', n2: 'z1', n3: 'z1', n4: 'z1' });
  // Not asked (a maintenance without a rollout): not said.
  expect(selectionOf(SELECTOR, nodes).elsewhere).toBeUndefined();
});
