// #26.1: which Node events the bridge's held-nodes feed tells a coordinator about (held-nodes.ts).
import type { V1Node } from '@kubernetes/client-node';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL } from '../../api/node-maintenance.js';
import { concernsHolder, toldOnList } from '../../starter/bridge/maintenance/held-nodes.js';

const node = (o: { held?: boolean; cordoned?: boolean; claim?: string; label?: boolean } = {}): V1Node => ({
  metadata: {
    name: 'n1',
    labels: o.label || o.held ? { [MAINTENANCE_STATE_LABEL]: 'Cordoned' } : {},
    annotations: { ...(o.held ? { [HELD_BY_ANNOTATION]: 'm1' } : {}), ...(o.claim ? { [CYCLED_BY]: o.claim } : {}) },
  },
  spec: { unschedulable: o.cordoned ? true : undefined },
});

describe('#26.1 the held-nodes feed tells a coordinator what its holders care about', () => {
  test('a held node uncordoned, or its held-by gone, is told; a held, cordoned node changing otherwise is not', () => {
    expect(concernsHolder('MODIFIED', node({ held: true, cordoned: false }), undefined)).toBe(true);
    expect(concernsHolder('MODIFIED', node({ label: true, cordoned: true }), undefined)).toBe(true);
    expect(concernsHolder('MODIFIED', node({ held: true, cordoned: true }), undefined)).toBe(false);
  });
  test('a node no maintenance marks: only a claim coming or going is told', () => {
    expect(concernsHolder('MODIFIED', node({ cordoned: false }), undefined)).toBe(false);
    expect(concernsHolder('MODIFIED', node({ claim: 'ns/cnr' }), undefined)).toBe(true);
    expect(concernsHolder('MODIFIED', node({}), 'ns/cnr')).toBe(true);
    expect(concernsHolder('MODIFIED', node({ claim: 'ns/cnr' }), 'ns/cnr')).toBe(false);
  });
  test('deletion of a marked or claimed node, and any node added, are told', () => {
    expect(concernsHolder('DELETED', node({ held: true, cordoned: true }), undefined)).toBe(true);
    expect(concernsHolder('DELETED', node({}), 'ns/cnr')).toBe(true);
    expect(concernsHolder('DELETED', node({}), undefined)).toBe(false);
    expect(concernsHolder('ADDED', node({}), undefined)).toBe(true);
  });
  test('a list tells every marked or claimed node once', () => {
    expect(toldOnList(node({ held: true, cordoned: true }))).toBe(true);
    expect(toldOnList(node({ claim: 'ns/cnr' }))).toBe(true);
    expect(toldOnList(node({}))).toBe(false);
  });
});
