// Printer-column JSONPath as upstream's parser reads it (client-go's
// util/jsonpath): fields run to a terminator and a backslash escapes the
// next character (Crossplane's `.metadata.annotations.crossplane\.io/usage-details`),
// indexes, wildcards and equality filters.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findAll, parseJsonPath } from '../../../src/api/apiextensions/jsonpath.js';

const obj = {
  metadata: { name: 'u1', annotations: { 'crossplane.io/usage-details': 'used by x', 'a.b.c': 'dots' }, labels: { 'app.kubernetes.io/name': 'web' } },
  spec: { containers: [{ name: 'c0', image: 'i0' }, { name: 'c1', image: 'i1' }] },
  status: { conditions: [{ type: 'Synced', status: 'True' }, { type: 'Ready', status: 'False' }] },
};

// [path, what it finds]
const cases: [string, unknown[]][] = [
  ['.metadata.annotations.crossplane\\.io/usage-details', ['used by x']],
  ['.metadata.annotations.a\\.b\\.c', ['dots']],
  ['.metadata.labels.app\\.kubernetes\\.io/name', ['web']],
  [".metadata.labels['app.kubernetes.io/name']", ['web']],
  ['.spec.containers[1].name', ['c1']],
  ['.spec.containers[*].image', ['i0', 'i1']],
  ['.spec.containers.*', []],
  ['.status.conditions[?(@.type=="Ready")].status', ['False']],
  ['.metadata.missing', []],
];

test('upstream JSONPath cases: escaped dots, indexes, wildcards, filters', () => {
  for (const [path, found] of cases) {
    const parsed = parseJsonPath(path);
    assert.notEqual(typeof parsed, 'string', `${path}: ${String(parsed)}`);
    assert.deepEqual(findAll(obj, parsed as Exclude<typeof parsed, string>), found, path);
  }
});
