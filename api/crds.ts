// Every CRD slipway serves, generated from its zod types (npm run crds). Add new kinds here.
import type { CrdDefinition } from './crd.js';
import { DRAIN_RULE, DrainRuleSpec } from './drain-rule.js';

export const CRDS: CrdDefinition[] = [
  {
    kind: DRAIN_RULE.kind,
    plural: DRAIN_RULE.plural,
    singular: DRAIN_RULE.singular,
    shortNames: ['dr'],
    scope: 'Cluster',
    spec: DrainRuleSpec,
    printerColumns: [
      { name: 'Behavior', type: 'string', jsonPath: '.spec.drain.behavior' },
      { name: 'Order', type: 'integer', jsonPath: '.spec.drain.order' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  },
];
