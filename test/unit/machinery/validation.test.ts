import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isLabelValue, isConfigMapKey } from '../../../src/machinery/validation.js';
import { validateObjectMeta, generateName } from '../../../src/machinery/objectmeta.js';
import { errors, fieldErrors } from '../../../src/machinery/errors.js';

test('name rules', () => {
  assert.deepEqual(isDns1123Label('my-ns'), []);
  assert.equal(isDns1123Label('a.b').length, 1);
  assert.equal(isDns1123Label('x'.repeat(64)).length, 1);
  assert.deepEqual(isDns1123Subdomain('a.b-c.d'), []);
  assert.equal(isDns1123Subdomain('Upper').length, 1);
  assert.equal(isDns1123Subdomain('-start').length, 1);
  assert.deepEqual(isQualifiedName('example.com/My_Name.1'), []);
  assert.ok(isQualifiedName('a/b/c').length > 0);
  assert.ok(isQualifiedName('/x').length > 0);
  assert.deepEqual(isLabelValue(''), []);
  assert.ok(isLabelValue('-x').length > 0);
  assert.deepEqual(isConfigMapKey('.env_File-1'), []);
  assert.ok(isConfigMapKey('..x').length > 0);
  assert.ok(isConfigMapKey('a b').length > 0);
});

test('object metadata validation names every bad field', () => {
  const errs = validateObjectMeta({ name: 'Bad_Name', labels: { 'bad key': 'v' }, finalizers: ['a/b', 'a/b'] }, { namespaced: true, nameCheck: isDns1123Subdomain });
  const fields = errs.map((e) => e.field);
  assert.ok(fields.includes('metadata.name'));
  assert.ok(fields.includes('metadata.namespace'));
  assert.ok(fields.includes('metadata.labels'));
  assert.ok(fields.includes('metadata.finalizers[1]'));
  assert.deepEqual(validateObjectMeta({ generateName: 'gen-', namespace: 'ns' }, { namespaced: true, nameCheck: isDns1123Subdomain }), []);
  const cluster = validateObjectMeta({ name: 'x', namespace: 'ns' }, { namespaced: false, nameCheck: isDns1123Label });
  assert.equal(cluster[0].describe(), 'metadata.namespace: Forbidden: not allowed on this type');
});

test('generated names keep a 58-character prefix and add 5 characters', () => {
  assert.match(generateName('web-'), /^web-[a-z0-9]{5}$/);
  assert.equal(generateName('x'.repeat(80)).length, 63);
});

test('generated suffixes use upstream\'s alphabet (no vowels, no look-alike digits), every character of it', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) for (const c of generateName('a-').slice(2)) seen.add(c);
  assert.equal([...seen].sort().join(''), '245678bcdfghjklmnpqrstvwxz9'.split('').sort().join(''));
});

test('Invalid status message and causes follow upstream form', () => {
  const e = errors.invalid('', 'ServiceAccount', 'Bad', [fieldErrors.invalid('metadata.name', 'Bad', 'must be lowercase'), fieldErrors.required('spec.x')]);
  assert.equal(e.code, 422);
  assert.equal(e.message, 'ServiceAccount "Bad" is invalid: [metadata.name: Invalid value: "Bad": must be lowercase, spec.x: Required value]');
  assert.deepEqual(e.toStatus().details, {
    name: 'Bad', kind: 'ServiceAccount',
    causes: [
      { reason: 'FieldValueInvalid', message: 'Invalid value: "Bad": must be lowercase', field: 'metadata.name' },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.x' },
    ],
  });
});
