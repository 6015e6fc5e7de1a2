// `slipway maintenance <name> stage <Stage> [--reason R]` (the setStage update, NM-2.15),
// `slipway maintenance <name> status` / `slipway status nm/<name>` (NM-7.12) and
// `slipway maintenance <name> plan` (the Idle preview computed afresh: the refreshPlan update), and for a
// rolling maintenance `done <node>` and `pause`/`resume` (the rolloutNodeDone and setRolloutPaused
// updates): a maintenance's workflow found by its object (or, once deleted, by its SlipwayObject search attribute).
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { webUiLink } from '../../shared/temporal.js';
import { maintenancePlanQuery, maintenanceRefreshPlanUpdate, maintenanceStatusQuery, rolloutNodeDoneUpdate, setRolloutPausedUpdate, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { callerIdentity } from '../client.js';
import type { Io } from './drain.js';
import { CliError } from './errors.js';
import { doc } from './output.js';
import { renderMaintenance, renderPlan } from './maintenance-render.js';
import { describe, maintenanceWorkflowIdOf, type Target } from './resolve.js';
import type { Session } from './session.js';

const QUERY_TIMEOUT_MS = 10_000;
const UPDATE_TIMEOUT_MS = 15_000;
/** How long `plan` waits for a fresh preview (the workflow reads every selected node's pods). */
const REFRESH_TIMEOUT_MS = 30_000;

async function queryMaintenance(client: Client, id: string): Promise<MaintenanceStatus | undefined> {
  return client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflow.getHandle(id).query(maintenanceStatusQuery)).catch(() => undefined);
}

/** What a maintenance is doing (or how it ended): stage, conditions, plan position, per-node targets and blockers. */
export async function maintenanceStatus(session: Session, t: Target & { kind: 'maintenance' }, io: Io): Promise<number> {
  const client = await session.client();
  const desc = await describe(client, t.id);
  if (!desc) throw new CliError(`no workflow ${t.id} in Temporal namespace ${session.settings.namespace} yet (the bridge starts it: is it running?)`);
  const running = desc.status.name === 'RUNNING';
  const s = await queryMaintenance(client, t.id);
  if (!s && running) throw new CliError(`${t.id} is running, but no worker answered within ${QUERY_TIMEOUT_MS / 1000} s: is a worker polling task queue ${desc.taskQueue}?`);
  io.doc?.(doc({ kind: 'Status', target: 'maintenance', workflowId: t.id, state: desc.status.name.toLowerCase(), closedAt: desc.closeTime?.toISOString(), webUi: webUiLink(t.id), status: s }));
  io.out(`${t.id} (${running ? 'running' : `${desc.status.name.toLowerCase()} at ${desc.closeTime?.toISOString() ?? '?'}`}; Web UI: ${webUiLink(t.id)})`);
  io.out(s ? renderMaintenance(s) : `${desc.status.name.toLowerCase()}; no worker answered for its last status`);
  return 0;
}

/**
 * The Idle preview in full: per node, entry and wave, the pods Drain would evict; skipped, kept, PDB
 * blockers. Asks for a fresh one (the refreshPlan update); one not ready within REFRESH_TIMEOUT_MS
 * (a large selection) gives way to the last one (the maintenancePlan query), its age shown.
 */
export async function maintenancePlan(session: Session, name: string, io: Io): Promise<number> {
  const id = await maintenanceWorkflowIdOf(session, name);
  const client = await session.client();
  const desc = await describe(client, id);
  if (!desc) throw new CliError(`no workflow ${id} in Temporal namespace ${session.settings.namespace} yet (the bridge starts it: is it running?)`);
  if (desc.status.name !== 'RUNNING') throw new CliError(`maintenance ${name} has ended (${id} ${desc.status.name.toLowerCase()}): no plan to show`);
  const h = client.workflow.getHandle(id);
  let plan = await client.withDeadline(Date.now() + REFRESH_TIMEOUT_MS, () => h.executeUpdate(maintenanceRefreshPlanUpdate)).catch(() => undefined);
  const fresh = !!plan;
  plan ??= await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => h.query(maintenancePlanQuery)).catch(() => undefined);
  if (!plan) throw new CliError(`${id} is running, but no worker answered within ${QUERY_TIMEOUT_MS / 1000} s: is a worker polling task queue ${desc.taskQueue}?`);
  io.doc?.(doc({ kind: 'MaintenancePlan', workflowId: id, fresh, plan }));
  io.out(`${id} (Web UI: ${webUiLink(id)})`);
  if (!fresh && plan.stage === 'Idle') io.out(`(no fresh preview within ${REFRESH_TIMEOUT_MS / 1000} s: the last one follows)`);
  io.out(renderPlan(plan, new Date()));
  return 0;
}

/** The running workflow of maintenance `name`, for an update (`what` is said when it has ended). */
async function runningMaintenance(session: Session, name: string, what: string): Promise<{ client: Client; id: string }> {
  const id = await maintenanceWorkflowIdOf(session, name);
  const client = await session.client();
  const desc = await describe(client, id);
  if (!desc) throw new CliError(`no workflow ${id} in Temporal namespace ${session.settings.namespace} yet (the bridge starts it: is it running?)`);
  if (desc.status.name !== 'RUNNING') throw new CliError(`maintenance ${name} has ended (${id} ${desc.status.name.toLowerCase()}): ${what}`);
  return { client, id };
}

/** An update's answer; its refusal (the workflow's validator or handler) as one line naming the update. */
async function update<R>(client: Client, id: string, label: string, send: () => Promise<R>): Promise<R> {
  try {
    return await client.withDeadline(Date.now() + UPDATE_TIMEOUT_MS, send);
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new CliError(`${label} refused by ${id}: ${(err.cause?.message ?? err.message).split('\n')[0]}`);
    throw err;
  }
}

/** Advances the stage through the running workflow (it writes spec.stage to the object, then acts). */
export async function setStage(session: Session, c: { name: string; stage: string; reason?: string }, io: Io): Promise<number> {
  const { client, id } = await runningMaintenance(session, c.name, 'no stage to set');
  const r = await update(client, id, `setStage ${c.stage}`, () =>
    client.workflow.getHandle(id).executeUpdate(setStageUpdate, { args: [{ stage: c.stage, reason: c.reason, requestedBy: callerIdentity() }] }),
  );
  io.out(`maintenance ${c.name}: stage ${r.stage}${r.generation !== undefined ? ` (spec generation ${r.generation})` : ''} — ${webUiLink(id)}`);
  return 0;
}

/** A rolling maintenance: the operator says a node's work is done (refused unless the node is AwaitingWork). */
export async function rolloutNodeDone(session: Session, c: { name: string; node: string }, io: Io): Promise<number> {
  const { client, id } = await runningMaintenance(session, c.name, 'no node to mark done');
  const r = await update(client, id, `done ${c.node}`, () =>
    client.workflow.getHandle(id).executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: c.node, requestedBy: callerIdentity() }] }),
  );
  io.out(`maintenance ${c.name}: node ${r.node} ${r.phase} — ${webUiLink(id)}`);
  return 0;
}

/** A rolling maintenance: pause (no new node is taken) or resume. */
export async function setRolloutPaused(session: Session, c: { name: string; paused: boolean }, io: Io): Promise<number> {
  const verb = c.paused ? 'pause' : 'resume';
  const { client, id } = await runningMaintenance(session, c.name, `nothing to ${verb}`);
  const r = await update(client, id, verb, () =>
    client.workflow.getHandle(id).executeUpdate(setRolloutPausedUpdate, { args: [{ paused: c.paused, requestedBy: callerIdentity() }] }),
  );
  io.out(`maintenance ${c.name}: rollout ${r.phase} — ${webUiLink(id)}`);
  return 0;
}
