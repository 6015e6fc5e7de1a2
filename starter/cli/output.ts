// `-o json|yaml`: one document per run, of a stable shape. These types are the documented schema
// (README, "The CLI"): every document has apiVersion and kind; fields are only ever added.
import { stringify } from 'yaml';
import { CLI_API_VERSION } from '../../api/names.js';
import type { DrainStatus } from '../../workflows/drain/status.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import type { InventoryResult } from '../../workflows/inventory.js';
import type { DryRunPlan } from '../cycle-cli.js';
import type { MaintenancePlan, MaintenanceStatus } from '../../workflows/maintenance/types.js';


/** `status <ref>`: the workflow behind the ref and its live status (or how it ended). */
export interface StatusDocument {
  apiVersion: typeof CLI_API_VERSION;
  kind: 'Status';
  target: 'request' | 'drain' | 'maintenance';
  workflowId: string;
  /** Temporal's execution status in lower case (running, completed, failed, ...), or not-started. */
  state: string;
  closedAt?: string;
  webUi?: string;
  /** The workflow's own status query: CycleStatus, DrainStatus or MaintenanceStatus; absent once it has ended without one. */
  status?: CycleStatus | DrainStatus | MaintenanceStatus;
  /** What the text output says (a finished drain's result, why a drain has not started). */
  message?: string;
}

/** `inventory`: nodes per node group. */
export interface InventoryDocument {
  apiVersion: typeof CLI_API_VERSION;
  kind: 'Inventory';
  selector?: string;
  groups: InventoryResult['groups'];
}

/** `maintenance <name> plan`: the Idle preview. */
export interface MaintenancePlanDocument {
  apiVersion: typeof CLI_API_VERSION;
  kind: 'MaintenancePlan';
  workflowId: string;
  /** false: no fresh preview in time, this is the last one. */
  fresh: boolean;
  plan: MaintenancePlan;
}

/** `cycle --dry-run`: what the request would do (the dry run's plan, as `cycle --dry-run` prints it); nothing is created. */
export interface CycleDryRunDocument extends DryRunPlan {
  apiVersion: typeof CLI_API_VERSION;
  kind: 'CycleDryRun';
  request: { namespace: string; name: string };
}

/** `version`: this CLI's, and with the servers reachable the worker's build and the API server's. */
export interface VersionDocument {
  apiVersion: typeof CLI_API_VERSION;
  kind: 'Version';
  cli: { version: string; node: string };
  /** The workers polling the task queue (from Temporal), and a build when one reports it. */
  worker?: { taskQueue: string; pollers: string[]; build?: { version: string; revision: string } } | { error: string };
  apiServer?: { gitVersion: string; platform: string } | { error: string };
  temporal?: { address: string; namespace: string; serverVersion?: string } | { error: string };
}

export type CliDocument = StatusDocument | InventoryDocument | MaintenancePlanDocument | CycleDryRunDocument | VersionDocument;

type Body<D> = D extends CliDocument ? Omit<D, 'apiVersion'> : never;
export const doc = <D extends Body<CliDocument>>(d: D): CliDocument => ({ apiVersion: CLI_API_VERSION, ...d }) as unknown as CliDocument;

export function renderDocument(d: CliDocument, format: 'json' | 'yaml'): string {
  return format === 'json' ? JSON.stringify(d, null, 2) : stringify(d).trimEnd();
}
