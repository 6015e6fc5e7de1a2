// #24.6: a maintenance whose drain is blocked says so where `kubectl get snm` and `describe` look
// first — the one-line message and the Drained condition name the blocking pods and PDBs, the
// Blocked printer column reads the blocked count, and a DrainBlocked Warning Event is recorded once
// per block (as for a CycleNodeRequest, by the same code). Also #24.5's status line: the Idle
// message says when the preview was computed.
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { CRDS } from '../../api/crds.js';
import { maintenanceEvents, maintenanceObjectStatus } from '../../starter/bridge/maintenance/status.js';
import { drainMessage, emptyStatus } from '../../workflows/drain/status.js';
import { maintenanceStatus, type Facts } from '../../workflows/maintenance/status.js';
import type { NodeReport } from '../../workflows/maintenance/types.js';

const PDB = "cannot evict pod as it would violate the pod's disruption budget. The disruption budget web-guard needs 1 healthy pods and has 1 currently";
/** The drain's own message, so the two cannot drift apart; the report carries its lines after the first. */
const blockers = (pods: string[]) =>
  drainMessage({ ...emptyStatus('n1'), phase: 'Draining', startedAt: '2026-01-01T10:01:00Z', wave: { order: 0, evicting: [], blocked: [{ reason: PDB, pdbs: ['web-guard'], pods }], waitingCompletion: [] } })
    .split('\n')
    .slice(1)
    .join('\n');
const report = (over: Partial<NodeReport> = {}): NodeReport => ({
  node: 'n1', seq: 1, lanes: [], finished: false, drained: false, gone: false, released: false,
  counts: { podsPendingEvictionRequest: 1, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 }, coveredBy: ['m1'], limitedBy: [], blockers: '', ...over,
});
const facts = (stage: Facts['stage'], nodes: Array<[string, NodeReport]>, over: Partial<Facts> = {}): Facts => ({
  name: 'm1', stage, plan: [...DEFAULT_DRAIN_PLAN], index: 0, nodes: new Map(nodes), planned: [], selectedTotal: nodes.length,
  stageStatuses: [{ name: stage, startTimestamp: '2026-01-01T10:00:00Z' }], completed: false, deleting: false, ...over,
});
const blockedReport = report({ blockers: blockers(['app/web-0']), counts: { podsPendingEvictionRequest: 1, activeEvictionRequests: 0, podsBlocked: 1, podsKept: 0 } });

describe('#24.6 a stuck maintenance names its blockers', () => {
  test('the one-line message and the Drained condition name the blocked pod and its PDB', () => {
    const s = maintenanceStatus(facts('Drain', [['n1', blockedReport], ['n2', report({ node: 'n2' })]]));
    expect(s.message).toMatch(/^Drain: Draining; 1 pod blocked: Pod app\/web-0: .*web-guard.* \(node n1\)$/);
    const drained = s.conditions.find((c) => c.type === 'Drained')!;
    expect(drained).toMatchObject({ status: 'False', reason: 'DrainBlocked' });
    expect(drained.message.split('\n')[0]).toBe('Draining');
    expect(drained.message).toContain('* Node n1: ');
    expect(drained.message).toMatch(/\n  \* Pod app\/web-0: .*web-guard/);
    expect(drained.message).not.toContain('Node n2'); // not blocked: not named
    expect(s.drainStatus.podsBlocked).toBe(1);
  });

  test('unblocked, it reads as before', () => {
    const s = maintenanceStatus(facts('Drain', [['n1', report()]]));
    expect(s.message).toBe('Drain: Draining');
    expect(s.conditions.find((c) => c.type === 'Drained')).toMatchObject({ reason: 'Draining', message: 'Draining' });
  });

  test('one DrainBlocked Warning Event when the node becomes blocked, none while it stays blocked', () => {
    const wf = { workflowId: 'nm/m1/u1' };
    const now = new Date('2026-01-01T10:02:00Z');
    const draining = maintenanceObjectStatus({ prev: undefined, workflow: wf, state: maintenanceStatus(facts('Drain', [['n1', report()]])), observedGeneration: 1, now });
    const blocked = maintenanceObjectStatus({ prev: draining, workflow: wf, state: maintenanceStatus(facts('Drain', [['n1', blockedReport]])), observedGeneration: 1, now });
    const events = maintenanceEvents(draining, blocked, undefined).filter((e) => e.reason === 'DrainBlocked');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', dedup: 'nm/m1/u1/DrainBlocked/n1/Pod app/web-0' });
    expect(events[0]!.message).toMatch(/^drain of node n1 is blocked:\n\* Pod app\/web-0: .*web-guard/);
    const still = maintenanceObjectStatus({ prev: blocked, workflow: wf, state: maintenanceStatus(facts('Drain', [['n1', blockedReport]])), observedGeneration: 1, now });
    expect(maintenanceEvents(blocked, still, undefined).filter((e) => e.reason === 'DrainBlocked')).toEqual([]);
  });

  test('kubectl get snm shows the blocked count (printer column Blocked reads drainStatus.podsBlocked)', () => {
    const nm = CRDS.find((c) => c.kind === 'NodeMaintenance')!;
    expect(nm.printerColumns).toContainEqual(expect.objectContaining({ name: 'Blocked', type: 'integer', jsonPath: '.status.drainStatus.podsBlocked' }));
  });
});

test('#24.5 the Idle message says when the preview was computed', () => {
  const computedAt = '2026-01-01T10:00:05.000Z';
  const s = maintenanceStatus(facts('Idle', [], { planned: ['n1'], preview: { digest: 'd', computedAt, nodes: [] } }));
  expect(s.message).toBe(`Idle: 1 node selected; nothing touched; preview computed at ${computedAt}`);
});
