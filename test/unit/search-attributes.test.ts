// The dev server registers the search attributes listed in stack/stack.sh; the workflows use the
// keys in workflows/search-attributes.ts. The two lists must agree.
import { readFileSync } from 'node:fs';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';

test('stack.sh registers exactly the search attributes the workflows define, with the same types', () => {
  const line = readFileSync('stack/stack.sh', 'utf8').match(/^SEARCH_ATTRIBUTES=\((.*)\)$/m)![1]!;
  const registered = Object.fromEntries(line.split(/\s+/).map((kv) => kv.split('=') as [string, string]));
  const expected = Object.fromEntries(ALL_SEARCH_ATTRIBUTES.map((k) => [k.name, k.type.toLowerCase().replace(/_/g, '')]));
  expect(Object.fromEntries(Object.entries(registered).map(([k, v]) => [k, v.toLowerCase()]))).toEqual(expected);
});
