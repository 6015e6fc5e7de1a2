// `slipway maintenance <name> plan`: the command line, and the Idle preview as text (per node, per
// plan entry, per wave: pods; then skipped, kept and PDB-blocked pods with their reasons).
import { DEFAULT_DRAIN_PLAN, effectivePlan } from '../../api/drain-plan.js';
import { parseCommand } from '../../starter/cli/args.js';
import { UsageError } from '../../starter/cli/errors.js';
import { renderPlan } from '../../starter/cli/maintenance-render.js';
import type { MaintenancePlan } from '../../workflows/maintenance/types.js';

test('maintenance <name> plan parses; it takes no further argument and no --reason', () => {
  expect(parseCommand(['maintenance', 'rack-7', 'plan'])).toEqual({ cmd: 'maintenance', name: 'rack-7', action: 'plan' });
  expect(() => parseCommand(['maintenance', 'rack-7', 'plan', 'Drain'])).toThrow(new UsageError('unexpected argument "Drain" for maintenance rack-7 plan'));
  expect(() => parseCommand(['maintenance', 'rack-7', 'plan', '--reason', 'x'])).toThrow(new UsageError('--reason goes with stage, not plan'));
});

const NOW = new Date('2026-11-27T10:00:12.000Z');
const plan = effectivePlan([{ podType: 'Default', podPriority: 1000 }]);

const PREVIEW: MaintenancePlan = {
  name: 'rack-7',
  stage: 'Idle',
  plan,
  preview: {
    digest: 'd',
    computedAt: '2026-11-27T10:00:00.000Z',
    nodes: [
      {
        node: 'n1',
        exists: true,
        message: 'Planned: 3 pods in 2 entries, 1 waited for, 1 skipped, 1 kept; blocked now: app/db-0 (PDB db)',
        evict: 3,
        entries: 2,
        waitCompleted: 1,
        skipped: 1,
        kept: 1,
        blocked: 1,
        pods: [
          { pod: 'app/web-0', entry: 0, wave: 0, action: 'Evict', reason: 'default' },
          { pod: 'app/db-0', entry: 0, wave: 0, action: 'Evict', reason: 'default', blockedBy: ['db'] },
          { pod: 'app/batch', entry: 0, wave: 0, action: 'WaitCompleted', reason: 'label slipway.dev/drain=wait-completed' },
          { pod: 'app/front', entry: 0, wave: 5, action: 'Evict', reason: 'DrainRule front-last' },
          { pod: 'app/pinned', entry: 0, wave: 0, action: 'Skip', reason: 'label slipway.dev/drain=skip' },
          { pod: 'app/big', entry: 1, wave: 0, action: 'Evict', reason: 'default' },
          { pod: 'kube-system/agent', entry: 5, wave: 0, action: 'Skip', kept: true, reason: 'DaemonSet pod without evacuator: left for node shutdown' },
        ],
        podsOmitted: 2,
        errors: [],
      },
      { node: 'n2', exists: false, message: 'Planned: node no longer exists', evict: 0, entries: 0, waitCompleted: 0, skipped: 0, kept: 0, blocked: 0, pods: [], podsOmitted: 0, errors: [] },
    ],
  },
};

test('the plan text groups pods by node, plan entry and wave, then lists skipped, kept and blocked pods with their reasons', () => {
  expect(renderPlan(PREVIEW, NOW).split('\n')).toEqual([
    'maintenance rack-7: stage Idle; plan of 13 entries',
    'nodes: 2 previewed; computed 12 s ago at 2026-11-27T10:00:00.000Z',
    '  n1: Planned: 3 pods in 2 entries, 1 waited for, 1 skipped, 1 kept; blocked now: app/db-0 (PDB db)',
    '    entry 1: Default ≤ 1000',
    '      wave 0:',
    '        app/web-0',
    '        app/db-0 (blocked now by PDB db)',
    '        app/batch (waited for, not evicted: label slipway.dev/drain=wait-completed)',
    '      wave 5:',
    '        app/front (DrainRule front-last)',
    '    entry 2: Default ≤ 1000000000',
    '      wave 0:',
    '        app/big',
    '    skipped:',
    '      app/pinned: label slipway.dev/drain=skip',
    '    kept:',
    '      kube-system/agent: DaemonSet pod without evacuator: left for node shutdown',
    '    blocked now (PDB allows no disruption):',
    '      app/db-0: PDB db',
    '    … and 2 more pods not listed (counts include them)',
    '  n2: Planned: node no longer exists',
  ]);
});

test('without a preview, or after Idle, the text says so', () => {
  expect(renderPlan({ name: 'm', stage: 'Cordon', plan: [...DEFAULT_DRAIN_PLAN] }, NOW)).toBe('maintenance m: stage Cordon; plan of 12 entries\nno preview: it is computed only while Idle');
  expect(renderPlan({ ...PREVIEW, stage: 'Drain' }, NOW).split('\n')[1]).toBe('(the preview as last computed while Idle; the stage is now Drain)');
});
