// The chaos table: one row per run, a column per invariant (stack/invariants.ts).
import { INVARIANTS, type InvariantName } from '../../stack/invariants.js';
import { ROLLOUT_INVARIANTS, type RolloutInvariantName } from '../../stack/rollout-invariants.js';
import type { Fault } from './faults.js';
import type { RunResult } from './run.js';

const SHORT: Record<InvariantName, string> = {
  'skip-kept': 'skip',
  'waves-ordered': 'waves',
  'node-after-drain': 'node',
  'evicted-once': 'once',
  'nothing-stranded': 'strand',
  'capacity-kept': 'cap',
  'ended-in-time': 'end',
  'no-orphan-workflow': 'orphan',
  'budget-kept': 'budget',
};

export function passed(r: RunResult): boolean {
  return !r.error && r.verdicts.length > 0 && r.verdicts.every((v) => v.ok) && !/not reached|before the/.test(r.outcome);
}

export function header(): string {
  return `| point | fault | outcome | resume s | end s | ${Object.values(SHORT).join(' | ')} | rollout |\n|${'---|'.repeat(6 + Object.keys(SHORT).length)}`;
}

export function row(r: RunResult, fault: Fault): string {
  const what = fault.kind === 'point' ? `SIGKILL ${fault.process}` : fault.kind === 'random' ? `SIGKILL ${fault.process} at random` : fault.kind === 'none' ? 'none' : 'server';
  const cells = (Object.keys(SHORT) as InvariantName[]).map((n) => {
    const v = r.verdicts.find((x) => x.name === n);
    return v ? (v.ok ? 'ok' : `**FAIL** ${v.detail}`) : '-';
  });
  // A rolling maintenance's own invariants share one column ('-' for the other scenarios).
  const rolling = r.verdicts.filter((v) => v.name in ROLLOUT_INVARIANTS);
  const bad = rolling.filter((v) => !v.ok);
  cells.push(!rolling.length ? '-' : bad.length ? `**FAIL** ${bad.map((v) => `${v.name}: ${v.detail}`).join('; ')}` : 'ok');
  const outcome = r.error ? `error: ${r.error}` : `${r.outcome}; ${r.phase || 'not ended'}`;
  return `| ${r.fault} | ${what} | ${outcome} | ${r.resumeMs !== undefined ? (r.resumeMs / 1000).toFixed(1) : '-'} | ${r.endMs !== undefined ? (r.endMs / 1000).toFixed(1) : '-'} | ${cells.join(' | ')} |`;
}

export const legend = () =>
  [...Object.entries(SHORT).map(([k, s]) => `${s} = ${INVARIANTS[k as InvariantName]}`), `rollout = ${Object.keys(ROLLOUT_INVARIANTS).map((k) => ROLLOUT_INVARIANTS[k as RolloutInvariantName]).join(', ')}`].join('; ');
