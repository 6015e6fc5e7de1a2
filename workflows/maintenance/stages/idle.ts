// Idle: touch nothing (NM-2.2); the status previews which nodes would be taken.
import { condition } from '@temporalio/workflow';
import { longSteps } from '../../proxies.js';
import type { Maintenance, Next } from '../maintenance.js';
import { select } from './members.js';
import { checkCannotFinish } from '../cannot-finish.js';
import { overLimit } from '../limit.js';

/** The preview reads every selected node's pods: heartbeating, so a long selection is not cut at 30 s. */
const previewSteps = longSteps('10 minutes');

export async function idle(m: Maintenance): Promise<Next> {
  for (;;) {
    const sel = await select(m);
    m.planned = sel.nodes;
    m.tooMany = overLimit(sel); // shown in status: Cordon or Drain would be refused
    if (m.tooMany) skipPreview(m); // #28: no preview (nor what it read, a name a node) of what will be refused
    else {
      await checkCannotFinish(m, sel.nodes);
      await refreshPreview(m);
    }
    m.publish();
    m.dirty = false;
    // Until the bridge's feed says what the preview read has changed, a spec edit, a stage,
    // deletion, or `plan` asks: no activity and no timer, so waiting adds no history. A change the
    // feed could not see (no bridge leading, or before its watches began) is covered by the feed
    // itself: it signals every maintenance whose preview read before what it watches from.
    await condition(() => m.inputsChanged || woken(m));
    if (m.deleting && m.desired === 'Idle') return 'End'; // NM-2.11: no finalizer, nothing held
    if (m.desired !== 'Idle') return m.desired;
    if (!m.refreshAsked) await m.renewIfLong(); // the refreshPlan handler waits for the next preview
  }
}

function woken(m: Maintenance): boolean {
  return m.desired !== 'Idle' || m.deleting || m.dirty || m.refreshAsked;
}

function skipPreview(m: Maintenance): void {
  m.refreshAsked = false;
  m.inputsChanged = false;
  m.preview = undefined;
  m.previewInputs = undefined;
  m.cannotFinish = undefined;
  m.previewsDone++; // a `plan` waiting for a preview answers now
}

/**
 * Read-only (NM-2.2). An unchanged preview comes back as its digest alone (with its new time), so
 * refreshes keep history small.
 */
async function refreshPreview(m: Maintenance): Promise<void> {
  m.refreshAsked = false;
  m.inputsChanged = false; // a signal during the preview may postdate its reads: it stays set
  m.previewing = true;
  const r = await previewSteps.previewMaintenance.executeWithOptions({ summary: 'preview the drain' }, [
    { nodes: m.planned, plan: m.plan, options: m.spec.drain, previous: m.preview?.digest },
  ]);
  m.previewing = false;
  m.previewsDone++;
  m.previewInputs = r.inputs && { ...r.inputs, nodes: m.planned };
  if ('unchanged' in r) {
    if (m.preview) m.preview = { ...m.preview, computedAt: r.computedAt };
    return;
  }
  const { inputs: _i, ...preview } = r;
  m.preview = preview;
}
