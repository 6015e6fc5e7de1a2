// The syntax checks admission and zod share: label keys and values (the apiserver's rules),
// health-check endpoints with the node-IP placeholder, and regexes that both engines read alike.
import { endpointFor, HttpEndpoint, PortableRegex } from '../../api/health-check.js';
import { isEmptySelector, isLabelKey, isLabelValue, LABEL_KEY_PATTERN, LABEL_VALUE_PATTERN } from '../../api/label-selector.js';

const a = (n: number) => 'a'.repeat(n);

describe('label keys and values', () => {
  test.each([
    ['app', true], ['A_b.c-D', true], ['example.com/app', true], ['kubernetes.io/hostname', true], [a(63), true],
    [`${a(63)}.${a(63)}.${a(63)}.${a(61)}/x`, true], // prefix of exactly 253
    [`${a(63)}.${a(63)}.${a(63)}.${a(62)}/x`, false], // 254
    [a(64), false], ['', false], ['bad key!', false], ['a/b/c', false], ['/app', false], ['Example.com/app', false], ['-app', false], ['app.', false], ['ex_ample.com/app', false],
  ])('%j is a label key: %s', (key, ok) => {
    expect(isLabelKey(key)).toBe(ok);
  });

  test.each([['', true], ['x', true], [a(63), true], ['a.b_c-d', true], [a(64), false], ['-x', false], ['x-', false], ['a b', false], ['ü', false]])('%j is a label value: %s', (v, ok) => {
    expect(isLabelValue(v)).toBe(ok);
  });

  test('the patterns have no backslash and no lookaround, so CEL literals and RE2 read them as JavaScript does', () => {
    for (const p of [LABEL_KEY_PATTERN, LABEL_VALUE_PATTERN]) expect(p).not.toMatch(/\\|\(\?/);
  });

  test('a selector with no requirement is empty; one requirement is not', () => {
    expect([isEmptySelector(undefined), isEmptySelector({}), isEmptySelector({ matchLabels: {}, matchExpressions: [] })]).toEqual([true, true, true]);
    expect(isEmptySelector({ matchExpressions: [{ key: 'a', operator: 'Exists' }] })).toBe(false);
  });
});

describe('health-check endpoints', () => {
  test.each([
    'http://{{ .NodeIP }}:10256/healthz', 'https://{{.NodeIP}}/x?node={{ .NodeIP }}&y=1', 'http://127.0.0.1:65535/', 'http://[::1]/', 'https://health.example.com',
  ])('accepts %s', (e) => {
    expect(HttpEndpoint.safeParse(e).success).toBe(true);
  });

  test.each(['', 'x', 'ftp://x/', 'http://', 'http:///x', 'http://x:65536/', 'http://x/a b', 'http://ho<st/', 'http://{{ .NodeIp }}/', 'http://{{  .NodeIP }}/', 'http://x/ü'])('refuses %j', (e) => {
    expect(HttpEndpoint.safeParse(e).success).toBe(false);
  });

  test('the node IP replaces either spelling of the placeholder, everywhere', () => {
    expect(endpointFor('http://{{ .NodeIP }}:1/?n={{.NodeIP}}', '10.1.2.3')).toBe('http://10.1.2.3:1/?n=10.1.2.3');
  });
});

describe('health-check regexes', () => {
  test.each(['ok', '^(ok|ready)\\s*$', '(?:a|b)+', '(?<name>x)'])('accepts %j', (r) => {
    expect(PortableRegex.safeParse(r).success).toBe(true);
  });

  test.each(['([', '(?=x)', '(?!x)', '(?<=x)', '(a)\\1', '(?<n>a)\\k<n>', '(?i)ok', '(?P<n>a)', '\\Aok\\z', '[[:alpha:]]', '\\pL'])('refuses %j', (r) => {
    expect(PortableRegex.safeParse(r).success).toBe(false);
  });
});
