// NodeDisruptionBudget (slipway.dev/v1alpha1, cluster-scoped): how many of the nodes it selects may
// be disrupted at once (cordoned, draining, being deleted) across every CycleNodeRequest,
// NodeMaintenance and CLI drain, as a count or a percentage (Karpenter's NodePool budgets: a
// percentage rounds up), with cron windows during which another limit applies (0 = freeze) and an
// optional per-zone limit. The spec is checked twice from the same text (zod here, CEL/patterns in
// the CRD); status is the durable ledger of who disrupts which node (activities/budget/).
import { z } from 'zod';
import { celString, entryRule, repeatsEarlier } from './admission.js';
import { conditions, ObservedGeneration } from './cycle-node-request.js';
import { duration } from './duration.js';
import { LabelKey, LabelSelector } from './label-selector.js';

export { NODE_DISRUPTION_BUDGET } from './names.js';

export const DEFAULT_ZONE_KEY = 'topology.kubernetes.io/zone';

// ---- maxDisrupted: a count or a percentage --------------------------------------------------------

/** A count (0–100000, as a number or digits) or a percentage 0%–100%. No backslashes: also a CEL literal. */
export const MAX_DISRUPTED_PATTERN = '^([0-9]{1,5}|100000|(100|[1-9]?[0-9])%)$';
const MAX_DISRUPTED_RE = new RegExp(MAX_DISRUPTED_PATTERN);
export const MAX_COUNT = 100_000;
export const MAX_DISRUPTED_MESSAGE = 'maxDisrupted must be a number of nodes from 0 to 100000 or a percentage from 0% to 100% such as "10%"';

/** Whether v is a well-formed maxDisrupted (number or text). */
export function isMaxDisrupted(v: unknown): v is number | string {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 && v <= MAX_COUNT;
  return typeof v === 'string' && MAX_DISRUPTED_RE.test(v);
}

/**
 * int-or-string, as Karpenter's `nodes` and a PDB's maxUnavailable: 2, "2" or "10%". The CRD marks
 * it x-kubernetes-int-or-string and checks it with one CEL rule (a pattern would not see integers).
 */
export const MaxDisrupted = z
  .any()
  .superRefine((v, ctx) => {
    if (v === undefined) ctx.addIssue({ code: 'custom', message: 'Required value' });
    else if (!isMaxDisrupted(v)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)}: ${MAX_DISRUPTED_MESSAGE}` });
  })
  .meta({
    'x-kubernetes-int-or-string': true,
    // The apiserver applies a pattern to the string form only; CEL bounds the integer form (a CEL
    // rule on the string form of an int-or-string has no size bound and exceeds the cost budget).
    pattern: MAX_DISRUPTED_PATTERN,
    'x-kubernetes-validations': [{ rule: `type(self) != int || (self >= 0 && self <= ${MAX_COUNT})`, messageExpression: `string(self) + ': ${MAX_DISRUPTED_MESSAGE.replace(/"/g, '\\"')}'` }],
  }) as unknown as z.ZodType<number | string, number | string>;

// ---- schedule: 5-field cron (UTC), as Karpenter's budgets --------------------------------------------

const MONTHS = 'jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec';
const DAYS = 'sun|mon|tue|wed|thu|fri|sat';
/** One field: lists of `*`, values and ranges, each with an optional step. */
const field = (value: string) => {
  const item = `([*]|(${value})(-(${value}))?)(/[0-9]{1,2})?`;
  return `${item}(,${item})*`;
};
const FIELDS = [
  field('[0-5]?[0-9]'),
  field('[01]?[0-9]|2[0-3]'),
  field('0?[1-9]|[12][0-9]|3[01]'),
  field(`0?[1-9]|1[0-2]|${MONTHS}`),
  field(`[0-7]|${DAYS}`),
];
/** Lower-cased first (names are case-insensitive). Ranges going backwards are refused by zod only. */
export const CRON_PATTERN = `^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|${FIELDS.join('[ ]+')})$`;
const CRON_RE = new RegExp(CRON_PATTERN);
export const CRON_MESSAGE = 'is not a 5-field cron schedule (minute hour day-of-month month day-of-week, in UTC, such as "0 9 * * mon-fri") or one of @yearly, @monthly, @weekly, @daily, @hourly';

/** Why `text` is not a schedule we evaluate, or undefined. The evaluation is in workflows-free shared code (shared/budget.ts). */
export function cronError(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (!CRON_RE.test(t)) return `${JSON.stringify(text)} ${CRON_MESSAGE}`;
  for (const f of t.startsWith('@') ? [] : t.split(/ +/)) {
    for (const part of f.split(',')) {
      const m = /^([^/]+)(?:\/(\d+))?$/.exec(part);
      if (m?.[2] !== undefined && Number(m[2]) < 1) return `${JSON.stringify(text)}: step /${m[2]} must be at least 1`;
      const range = m?.[1]?.split('-');
      if (range?.length === 2 && nameValue(range[0]!) > nameValue(range[1]!)) return `${JSON.stringify(text)}: range ${m![1]} goes backwards`;
    }
  }
  return undefined;
}

const NAMES: Record<string, number> = Object.fromEntries([...MONTHS.split('|').map((m, i) => [m, i + 1]), ...DAYS.split('|').map((d, i) => [d, i])]);
export const nameValue = (s: string): number => NAMES[s] ?? Number(s);

export const Schedule = z
  .string()
  .max(256)
  .superRefine((s, ctx) => {
    const e = cronError(s);
    if (e) ctx.addIssue({ code: 'custom', message: e });
  })
  .meta({ 'x-kubernetes-validations': [{ rule: `self.lowerAscii().trim().matches(${celString(CRON_PATTERN)})`, messageExpression: `'"' + self + '" ${CRON_MESSAGE.replace(/"/g, '\\"')}'` }] });

export const WINDOW_DURATION_BOUNDS = { min: '1m', max: '8760h' } as const;

export const BudgetWindow = z.object({
  schedule: Schedule.describe('When the window opens (cron, UTC).'),
  duration: duration(WINDOW_DURATION_BOUNDS).describe('How long it stays open.'),
  maxDisrupted: MaxDisrupted.describe('The limit while it is open; 0 freezes.'),
});
export type BudgetWindow = z.infer<typeof BudgetWindow>;

export const PerZone = z.object({
  topologyKey: LabelKey.default(DEFAULT_ZONE_KEY).describe('The node label that names a node\'s zone.'),
  maxDisrupted: MaxDisrupted.describe('Per zone value of that label: a count, or a percentage of the selected nodes in that zone.'),
});

const MAX_WINDOWS = 16;
export const DUPLICATE_WINDOW_MESSAGE = 'two windows have the same schedule; merge them (when windows overlap, the lowest limit applies)';

export const NodeDisruptionBudgetSpec = z
  .object({
    nodeSelector: LabelSelector.optional().describe('The nodes it counts and limits; absent or empty: every node of the cluster.'),
    maxDisrupted: MaxDisrupted.describe('Nodes that may be disrupted at once: a count, or a percentage of the selected nodes, rounded up ("10%"); 0 freezes.'),
    schedules: z
      .array(BudgetWindow)
      .max(MAX_WINDOWS)
      .optional()
      .meta({ 'x-kubernetes-validations': [entryRule('schedules', MAX_WINDOWS, repeatsEarlier('schedule'), DUPLICATE_WINDOW_MESSAGE, '.schedule')] })
      .describe('Windows with their own limit: while a window is open its maxDisrupted replaces the base one; several open: the lowest.'),
    perZone: PerZone.optional().describe('A limit per zone as well: no zone has more disrupted nodes than this.'),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    s.schedules?.forEach((w, i) => {
      if (seen.has(w.schedule)) ctx.addIssue({ code: 'custom', path: ['schedules', i, 'schedule'], message: DUPLICATE_WINDOW_MESSAGE });
      seen.add(w.schedule);
    });
  })
  .describe('Which nodes the budget covers and how many of them may be disrupted at once.');
export type NodeDisruptionBudgetSpec = z.output<typeof NodeDisruptionBudgetSpec>;
export type NodeDisruptionBudgetSpecInput = z.input<typeof NodeDisruptionBudgetSpec>;

// ---- status: the ledger (written by Slipway only, plain shapes) -------------------------------------

/**
 * Most entries one budget's ledger holds, disrupted and waiting together (#28: a status must not
 * grow with the fleet). About 240 bytes an entry with EC2 node names and a request's holder ID, so
 * a full ledger is about 230 KiB, under the 256 KiB a status may take; a holder that finds it full
 * is refused ("its ledger is full") and asks again, as for a budget with no room.
 */
export const MAX_LEDGER_ENTRIES = 1000;
/** disruptedElsewhere names at most this many nodes; disruptedNodes and the message count every one. */
export const MAX_LISTED_ELSEWHERE = 100;

export const LedgerEntry = z.object({
  node: z.string().describe('The Node\'s name.'),
  holder: z.string().describe('The workflow ID that holds (or waits for) the node: cnr/…, nm-node/<node>, drain/<node>.'),
  since: z.string().describe('RFC 3339: when it was granted (disrupted) or when it arrived (waiting).'),
  lastSeen: z.string().optional().describe('waiting only: the holder\'s last poll (RFC 3339); a waiter silent for a minute is dropped.'),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const NodeDisruptionBudgetStatus = z.object({
  observedGeneration: ObservedGeneration,
  disrupted: z.array(LedgerEntry).optional().describe(`Nodes disrupted now and by whom. A node counts once, whatever its number of holders. With waiting, at most ${MAX_LEDGER_ENTRIES} entries: a holder that finds the ledger full waits outside it.`),
  waiting: z.array(LedgerEntry).optional().describe('Holders waiting for room, in arrival order.'),
  disruptedElsewhere: z.array(z.string()).optional().describe(`Selected nodes cordoned or being deleted that no holder names (a person's cordon, a drain that left its node cordoned): they count too. The first ${MAX_LISTED_ELSEWHERE} by name; disruptedNodes counts them all.`),
  limit: z
    .object({
      nodes: z.int32().describe('Nodes that may be disrupted at once now.'),
      selectedNodes: z.int32().describe('Nodes the budget selects now.'),
      reason: z.string().describe('"base maxDisrupted 10%" or `window "0 9 * * *" (2h) maxDisrupted 0`.'),
      observedAt: z.string().describe('When the limit was computed (RFC 3339).'),
    })
    .optional()
    .describe('The limit in force at the last status write.'),
  disruptedNodes: z.int32().optional().describe('Distinct nodes in disrupted plus disruptedElsewhere: what the limit is measured against (printer column).'),
  message: z.string().optional().describe('What the budget is doing, in one line (why a holder waits, why the spec is invalid).'),
  conditions: conditions('Valid (False: the spec is invalid, and the budget admits nothing: it fails closed)'),
}).describe('The ledger of who disrupts which node, and the limit in force, written by Slipway.');
export type NodeDisruptionBudgetStatus = z.infer<typeof NodeDisruptionBudgetStatus>;
