// The drain's looks at its node: a classify read, or the look a wave wait ended with (wait.ts),
// each good for the next step only; and the settings and DrainRules they were judged by.
import type { ClassifyInput } from '../../activities/drain/snapshot.js';
import type { DrainSnapshot } from '../../shared/drain.js';
import { steps } from '../proxies.js';
import type { Drain } from './state.js';

/** The look the previous step left for this one, if any (taken once). */
export function take(d: Drain): DrainSnapshot | undefined {
  const s = d.fresh;
  d.fresh = undefined;
  return s;
}

export async function classify(d: Drain): Promise<DrainSnapshot> {
  return looked(d, await steps.classifyPods.executeWithOptions({ summary: `classify the pods on ${d.node}` }, [classifyInput(d)]));
}

/** What a look at the node's pods needs: the targets, and the rules this drain judged by last (while unchanged, the worker's cache answers). */
export function classifyInput(d: Drain): ClassifyInput {
  const t = d.st.targets;
  const seen = d.rulesSeen ? { drainRulesSeen: d.rulesSeen } : {};
  return { nodeName: d.node, options: d.input.options, ...(t ? { targets: t.lanes } : {}), ...seen };
}

/** Remembers what a look was judged by: the drain's settings and its DrainRules fingerprint. */
export function looked(d: Drain, snap: DrainSnapshot): DrainSnapshot {
  d.settings = snap.settings ?? d.settings;
  d.rulesSeen = snap.drainRulesSeen ?? d.rulesSeen;
  return snap;
}
