// NodeGroup (slipway.dev/v1alpha1, cluster-scoped): Cyclops's NodeGroup. A CycleNodeRequest template
// for one cloud node group (or several), which the CLI's `cycle <NodeGroup>` and the drift observer
// turn into requests. The observer (workflows/node-group/observer.ts) looks every `interval` for
// nodes whose instance no longer matches the group's launch template, and creates one request from
// the template for them, never a second while one is running for the NodeGroup.
// (api/node-groups.ts is about the cloud groups a request names; this is the Kubernetes kind.)
import { z } from 'zod';
import { conditions, CycleNodeRequestSpec, ObservedGeneration } from './cycle-node-request.js';
import { DNS_LABEL_PATTERN } from './label-selector.js';
import { patterned } from './admission.js';
import { duration, DURATION_BOUNDS } from './duration.js';
import { Schedule, WINDOW_DURATION_BOUNDS } from './node-disruption-budget.js';

export { NODE_GROUP } from './names.js';

/** Annotation on a NodeGroup: `disabled` stops its drift observer (it still reports, and creates nothing). */
export const DRIFT_OBSERVER_ANNOTATION = 'slipway.dev/drift-observer';
/** Label on the CycleNodeRequests made from a NodeGroup (by the observer or the CLI): the NodeGroup's name. */
export const FROM_NODE_GROUP_LABEL = 'slipway.dev/from-node-group';
/** Label on kwok Nodes: the template hash they were launched with (the kwok provider's launch template version). */
export const TEMPLATE_HASH_LABEL = 'slipway.dev/template-hash';
/** Annotation on kwok Nodes: their group's template hash now (kwok has no group object; `stack/kwok/nodes.ts` setKwokTemplateHash sets it on every member). */
export const GROUP_TEMPLATE_HASH_ANNOTATION = 'slipway.dev/group-template-hash';

const NamespaceName = patterned(DNS_LABEL_PATTERN, 63, 'a namespace name (a DNS label: lowercase letters, digits and "-")');

const TOGETHER_MESSAGE = 'schedule and duration go together: a window opens at schedule and stays open for duration';

export const DriftObserverSettings = z
  .object({
    interval: duration(DURATION_BOUNDS.driftObserverInterval).default('5m').describe('Look for drift at most this often.'),
    schedule: Schedule.optional().describe('Requests are made only in windows opening at this cron schedule (UTC, as a NodeDisruptionBudget\'s); drift is reported at any time.'),
    duration: duration(WINDOW_DURATION_BOUNDS).optional().describe('How long each window stays open (with schedule).'),
  })
  .superRefine((s, ctx) => {
    if ((s.schedule === undefined) !== (s.duration === undefined)) ctx.addIssue({ code: 'custom', path: [s.schedule === undefined ? 'schedule' : 'duration'], message: TOGETHER_MESSAGE });
  })
  // Two rules, so that the refusal names the missing one (as zod does).
  .meta({
    'x-kubernetes-validations': [
      { rule: '!has(self.schedule) || has(self.duration)', message: TOGETHER_MESSAGE, fieldPath: '.duration' },
      { rule: '!has(self.duration) || has(self.schedule)', message: TOGETHER_MESSAGE, fieldPath: '.schedule' },
    ],
  });
export type DriftObserverSettings = z.infer<typeof DriftObserverSettings>;

export const NodeGroupSpec = z.object({
  requestNamespace: NamespaceName.default('default').describe('The namespace its CycleNodeRequests are created in.'),
  template: CycleNodeRequestSpec.describe('The CycleNodeRequest spec to cycle this group with (node group names, selector, cycle settings, health checks, drain).'),
  driftObserver: DriftObserverSettings.optional().describe('The drift observer; absent: no observer (the template is for the CLI only).'),
}).describe('The cloud node group as a CycleNodeRequest template, and whether its drift observer runs.');
export type NodeGroupSpec = z.infer<typeof NodeGroupSpec>;
export type NodeGroupSpecInput = z.input<typeof NodeGroupSpec>;

export const NodeGroupStatus = z.object({
  observedGeneration: ObservedGeneration,
  observedTime: z.string().optional().describe('When the observer last looked.'),
  driftedNodes: z.array(z.object({ name: z.string().describe('The Node\'s name.'), reason: z.string().describe('How its instance differs from the launch template.') })).max(1000).optional().describe('Nodes whose instance does not match the group\'s launch template, and why (at the last look).'),
  lastRequest: z.string().optional().describe('The request made for the drift (running, or the last one).'),
  message: z.string().optional().describe('What the observer saw or did last, in one line.'),
  conditions: conditions('Drifted (some node does not match the launch template)'),
}).describe('What the drift observer saw, written by Slipway.');
export type NodeGroupStatus = z.infer<typeof NodeGroupStatus>;

export interface NodeGroupObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; uid?: string; resourceVersion?: string; annotations?: Record<string, string>; generation?: number };
  spec?: unknown;
  status?: NodeGroupStatus;
}

/** The observer of this NodeGroup is switched off by its annotation. */
export const observerDisabled = (o: { metadata: { annotations?: Record<string, string> } }) => o.metadata.annotations?.[DRIFT_OBSERVER_ANNOTATION] === 'disabled';
