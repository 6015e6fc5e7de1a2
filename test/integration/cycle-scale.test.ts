// #28 at scale on the local stack: one CycleNodeRequest over 300 kwok nodes (empty nodes, concurrency
// 100) through the bridge and a real worker. The status it writes stays bounded while the request
// runs and after (status.nodes[] lists the nodes in flight, the first failed and the last cycled;
// nodesByPhase counts all 300; nodesNotListed the rest; the object far under the 256 KiB budget),
// and every node is still found: in its CycleNodeStatus (a labelled, paged list) and in
// `slipway status <request> -o json`, which pages the request's nodes.
import { writeFileSync } from 'node:fs';
import { CYCLE_REQUEST_LABEL, CYCLE_NODE_STATUS, type CycleNodeRequestStatus } from '../../api/cycle-node-request.js';
import { LISTED_FAILED, LISTED_FINISHED, MAX_LISTED_NODES } from '../../api/cycle-bounds.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import type { CycleNodeStatusObject } from '../../starter/bridge/cycle/objects.js';
import { STATUS_BUDGET_BYTES } from '../../starter/bridge/cycle/listed.js';
import { BridgeFixture } from '../support/bridge.js';
import { cli } from '../support/cli.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const NODES = 300;
const CONCURRENCY = 100;
/** The most entries status.nodes[] may hold here: in flight (≤ concurrency), the first failed, the last cycled. */
const LISTED_BOUND = CONCURRENCY + LISTED_FAILED + LISTED_FINISHED;

const f = new BridgeFixture('it-scale');
const group = uniqueName('it-scale');
const taskQueue = uniqueName('it-scale-tq');
const name = 'cycle';
let old: string[] = [];

/** Every status written while the request ran (sampled once a second), and its size in bytes. */
const samples: { status: CycleNodeRequestStatus; bytes: number }[] = [];
let final: CycleNodeRequestStatus;

beforeAll(async () => {
  await f.setup();
  old = await ensureFakeNodeGroup(f.c.core, group, NODES, {}, 240_000);
  await f.realWorker(taskQueue);
  await f.bridge({ taskQueue });
  await f.createCnr(name, { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: CONCURRENCY } });
  const done = await waitFor('the 300-node request Successful', async () => {
    const o = await f.getCnr(name);
    if (o?.status?.nodes) samples.push({ status: o.status, bytes: Buffer.byteLength(JSON.stringify(o)) });
    return (o?.status?.phase === 'Successful' || o?.status?.phase === 'Failed') && o;
  }, { timeoutMs: 600_000, intervalMs: 1000 });
  final = done.status!;
}, 900_000);

afterAll(async () => {
  writeFileSync(`/tmp/${f.ns}.log`, f.dumpLogs());
  await f.stopBridges();
  await f.teardown();
  await deleteGroupNodes(f.c, group);
}, 120_000);

const sum = (counts: Record<string, number> | undefined) => Object.values(counts ?? {}).reduce((a, b) => a + b, 0);

describe('#28 a CycleNodeRequest over 300 kwok nodes', () => {
  test('#28 its status stays bounded: nodes[] ≤ in flight + first failed + last cycled, counts for all 300, nodesNotListed the rest, far under 256 KiB', () => {
    expect({ phase: final.phase, cycled: final.nodesCycled }).toEqual({ phase: 'Successful', cycled: NODES });
    // From the resolve on (before it the request knows no node and counts none).
    const seen = samples.filter((s) => s.status.nodesTotal === NODES);
    expect(seen.length).toBeGreaterThan(3);
    const offending = seen
      .map(({ status: s, bytes }) => ({ listed: s.nodes!.length, counted: sum(s.nodesByPhase), notListed: s.nodesNotListed, bytes }))
      .filter((s) => s.listed > LISTED_BOUND || s.listed > MAX_LISTED_NODES || s.counted !== NODES || s.notListed !== NODES - s.listed || s.bytes >= STATUS_BUDGET_BYTES);
    expect(offending).toEqual([]);
    // Finished: the last cycled only, every node counted Successful.
    expect(final.nodes!.length).toBeLessThanOrEqual(LISTED_FINISHED);
    expect(final.nodesByPhase).toMatchObject({ Successful: NODES, Failed: 0, Pending: 0 });
    expect(final.nodesNotListed).toBe(NODES - final.nodes!.length);
    const largest = Math.max(...samples.map((s) => s.bytes));
    const mostListed = Math.max(...seen.map((s) => s.status.nodes!.length));
    f.logs.push(`#28 300 nodes: ${samples.length} statuses sampled, the largest ${largest} bytes, at most ${mostListed} entries listed`);
    // Sampled mid-run too: a batch in flight was listed (more than the last cycled alone).
    expect(mostListed).toBeGreaterThan(LISTED_FINISHED);
    expect(largest).toBeLessThan(64 * 1024);
  });

  test('#28 every node has its CycleNodeStatus, found by the request label, paged', async () => {
    const { group: g, version, plural } = CYCLE_NODE_STATUS;
    const all = await waitFor('300 CycleNodeStatus Successful', async () => {
      const items: CycleNodeStatusObject[] = [];
      let cont: string | undefined;
      do {
        const page = (await f.custom.listNamespacedCustomObject({ group: g, version, plural, namespace: f.ns, labelSelector: `${CYCLE_REQUEST_LABEL}=${name}`, limit: 100, _continue: cont })) as {
          items: CycleNodeStatusObject[];
          metadata?: { _continue?: string; continue?: string };
        };
        items.push(...page.items);
        cont = page.metadata?._continue ?? page.metadata?.continue;
      } while (cont);
      return items.length === NODES && items.every((s) => s.status?.phase === 'Successful') && items;
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    expect(all.map((s) => s.spec!.nodeName).sort()).toEqual([...old].sort());
  });

  test('#28 slipway status <request> -o json lists every node (paged), not only the bounded list', async () => {
    const r = await cli(['status', `cnr/${name}`, '-n', f.ns, '-o', 'json'], { SLIPWAY_TASK_QUEUE: taskQueue });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const doc = JSON.parse(r.stdout) as { message?: string; status?: { nodesTotal: number; nodes: { nodeName: string; phase: string }[] } };
    expect({ answered: doc.status !== undefined, message: doc.message }).toEqual({ answered: true, message: undefined });
    if (!doc.status) return;
    expect(doc.status.nodesTotal).toBe(NODES);
    expect(doc.status.nodes.map((n) => n.nodeName).sort()).toEqual([...old].sort());
    expect(doc.status.nodes.every((n) => n.phase === 'Successful')).toBe(true);
  }, 120_000);
});
