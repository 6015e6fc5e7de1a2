// Names the bridge derives: CycleNodeStatus names (valid, stable, unique when truncated) and the
// request label value.
import { cycleNodeStatusName, requestLabelValue } from '../../starter/bridge/cycle/names.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

describe('cycleNodeStatusName', () => {
  test('is <request>-<node> when that is a valid name', () => {
    expect(cycleNodeStatusName('cycle-workers', 'ip-10-0-1-2.ec2.internal')).toBe('cycle-workers-ip-10-0-1-2.ec2.internal');
  });

  test('too long: truncated to 253 with a hash, still valid, stable, and unique per pair', () => {
    const req = 'r'.repeat(200);
    const a = cycleNodeStatusName(req, `${'n'.repeat(100)}-a`);
    const b = cycleNodeStatusName(req, `${'n'.repeat(100)}-b`);
    for (const n of [a, b]) {
      expect(n.length).toBeLessThanOrEqual(253);
      expect(n).toMatch(DNS_SUBDOMAIN);
    }
    expect(a).not.toBe(b);
    expect(cycleNodeStatusName(req, `${'n'.repeat(100)}-a`)).toBe(a);
    expect(a.startsWith('rrrr')).toBe(true);
  });

  test('a cut that would end in "-" or "." still gives a valid name', () => {
    const n = cycleNodeStatusName('a'.repeat(241), 'b.c', 253);
    expect(n).toMatch(DNS_SUBDOMAIN);
    const m = cycleNodeStatusName('x', 'y'.repeat(20), 20);
    expect(m.length).toBeLessThanOrEqual(20);
    expect(m).toMatch(DNS_SUBDOMAIN);
  });

  test('characters a name may not have are replaced (and the name hashed)', () => {
    const n = cycleNodeStatusName('Req', 'Node_1');
    expect(n).toMatch(DNS_SUBDOMAIN);
    expect(n).not.toBe(cycleNodeStatusName('req', 'node-1'));
  });
});

describe('requestLabelValue', () => {
  test('the name itself up to 63 characters', () => {
    expect(requestLabelValue('cycle-workers')).toBe('cycle-workers');
    expect(requestLabelValue('a'.repeat(63))).toBe('a'.repeat(63));
  });

  test('longer names: 63 characters, valid, distinct', () => {
    const a = requestLabelValue(`${'a'.repeat(70)}.x`);
    const b = requestLabelValue(`${'a'.repeat(70)}.y`);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).toMatch(LABEL_VALUE);
    expect(a).not.toBe(b);
  });
});
