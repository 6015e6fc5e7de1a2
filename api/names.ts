// Slipway's API names in one zod-free module, so workflow code can use them without pulling zod into
// the workflow bundle (layers.test.ts refuses that): the API group and version, each kind's resource
// names (its module re-exports its own), the requester names of an Evacuation, the keys workflow
// messages name, and the limits a workflow enforces as the schema does. The schemas (with zod) import from here, never the reverse.

export const GROUP = 'slipway.dev';
export const VERSION = 'v1alpha1';
/** The apiVersion of every Slipway object (`slipway.dev/v1alpha1`). */
export const API_VERSION = `${GROUP}/${VERSION}` as const;

const resource = <K extends string, P extends string, S extends string>(kind: K, plural: P, singular: S) => ({ group: GROUP, version: VERSION, kind, plural, singular }) as const;

export const CYCLE_NODE_REQUEST = resource('CycleNodeRequest', 'cyclenoderequests', 'cyclenoderequest');
export const CYCLE_NODE_STATUS = resource('CycleNodeStatus', 'cyclenodestatuses', 'cyclenodestatus');
export const DRAIN_RULE = resource('DrainRule', 'drainrules', 'drainrule');
export const EVACUATION = resource('Evacuation', 'evacuations', 'evacuation');
export const NODE_DISRUPTION_BUDGET = resource('NodeDisruptionBudget', 'nodedisruptionbudgets', 'nodedisruptionbudget');
export const NODE_GROUP = resource('NodeGroup', 'nodegroups', 'nodegroup');
export const NODE_MAINTENANCE = resource('NodeMaintenance', 'nodemaintenances', 'nodemaintenance');

// ---- requester names of an Evacuation (nodemaintenance/<name>, cyclenoderequest/<ns>/<name>, drain/<node>) --

/** The kinds of requester, as the first segment of a requester name. */
export const REQUESTER_KIND = { maintenance: 'nodemaintenance', cycle: 'cyclenoderequest', drain: 'drain' } as const;
export const maintenanceRequester = (name: string) => `${REQUESTER_KIND.maintenance}/${name}`;
export const cycleRequester = (namespace: string, name: string) => `${REQUESTER_KIND.cycle}/${namespace}/${name}`;
/** A drain started by hand (the CLI) or by no owner that has its own requester name. */
export const drainRequester = (node: string) => `${REQUESTER_KIND.drain}/${node}`;

// ---- keys that workflow code names in its messages (the rest live with their kinds' schemas) ----

/** NodeMaintenance annotation "true": the user acknowledges a selector that takes every node (NM-4.8). */
export const ALLOW_ALL_NODES_ANNOTATION = 'maintenance.slipway.dev/allow-all-nodes';
/** Pod annotation "true" the cycle's Wait method waits for: such pods finish before the node is drained. */
export const DO_NOT_DISRUPT = 'slipway.dev/do-not-disrupt';
/** The CLI's -o json/yaml documents (their own group: they are output, never stored objects). */
export const CLI_API_VERSION = 'cli.slipway.dev/v1';

// ---- limits -------------------------------------------------------------------------------------

/** spec.reason's length limit of a NodeMaintenance (setStage writes the CLI's --reason there too, and checks it). */
export const MAX_MAINTENANCE_REASON = 1024;

/**
 * Nodes in flight at once when concurrency is unset ("all selected nodes"): a request over a
 * 20,000-node fleet must stay well under Temporal's 2,000 pending child workflows, and its
 * in-flight set, detach inputs and status with it (#28).
 */
export const DEFAULT_MAX_IN_FLIGHT = 500;
/** The concurrency of a request that leaves it unset, over `nodes` selected nodes. */
export const allAtOnce = (nodes: number) => Math.max(1, Math.min(DEFAULT_MAX_IN_FLIGHT, nodes));
