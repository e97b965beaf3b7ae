// Validation errors bounded: an enum's supported values in upstream's words
// (written once per schema node, cut past a budget), a 422 that lists at
// most maxListedErrors errors (the validator stops walking past them), each
// distinct error once in the message as upstream's aggregate, and the
// checks over list items linear (sets, not pairs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSchema, markers, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { errors, fieldErrors, maxListedErrors, maxListedErrorsText, maxSupportedValuesText, supportedValuesText } from '../../../../src/machinery/errors.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

const listOf = (items: JSONSchemaProps, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps =>
  ({ type: 'object', properties: { spec: { type: 'object', properties: { items: { type: 'array', items, ...extra } } } } });
const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

test('an Unsupported value reads as upstream\'s, values quoted as Go\'s %q', () => {
  assert.equal(fieldErrors.notSupported('spec.x', 'b', ['a', 'c']).describe(), 'spec.x: Unsupported value: "b": supported values: "a", "c"');
  assert.equal(supportedValuesText(['tab\there', 'bell\x07']), 'supported values: "tab\\there", "bell\\a"');
  const schema = listOf({ type: 'string', enum: ['red', 'green', 1, { a: 1 }] });
  assert.deepEqual(compileSchema(schema).validate({ spec: { items: ['pink'] } }).map((e) => e.describe()),
    ['spec.items[0]: Unsupported value: "pink": supported values: "red", "green", "1", "{\\"a\\":1}"']);
});

test('a long list of supported values is cut at the budget, on a whole value, with how many were left out', () => {
  const text = supportedValuesText(values(20_000));
  assert.ok(text.length <= maxSupportedValuesText + 20, `${text.length}`);
  const listed = text.match(/"v\d+"/g)!.length;
  assert.ok(text.startsWith('supported values: "v0", "v1", "v2"'));
  assert.ok(text.endsWith(`"v${listed - 1}" + ${20_000 - listed} more...`), text.slice(-40));
  // Short lists are upstream's text, whole.
  assert.equal(supportedValuesText(values(3)), 'supported values: "v0", "v1", "v2"');
});

test('the validator stops past the errors a 422 lists, and skips the CEL rules then', () => {
  const schema = listOf({ type: 'string', enum: values(50_000) });
  (schema.properties!.spec as JSONSchemaProps)[markers.validations] = [{ rule: 'self.items.size() < 0', message: 'never' }];
  const errs = compileSchema(schema).validate({ spec: { items: Array.from({ length: 1_500 }, (_, i) => `b${i}`) } });
  assert.ok(errs.length <= maxListedErrors + 2, `${errs.length} errors collected`);
  assert.ok(!errs.some((e) => e.detail === 'never'), 'the rules were not run');
  // Duplicates of a set or a list-map stop there too.
  const set = compileSchema(listOf({ type: 'integer' }, { [markers.listType]: 'set' }));
  assert.equal(set.validate({ spec: { items: [...values(1_000).map((_, i) => i), ...values(1_000).map((_, i) => i)] } }).length, maxListedErrors + 1);
  const map = compileSchema(listOf({ type: 'object', properties: { k: { type: 'integer' } } }, { [markers.listType]: 'map', [markers.listMapKeys]: ['k'] }));
  assert.equal(map.validate({ spec: { items: [...values(1_000).map((_, k) => ({ k })), ...values(1_000).map((_, k) => ({ k }))] } }).length, maxListedErrors + 1);
});

test('a 422 lists at most maxListedErrors causes, ends with a note, and its message repeats no error', () => {
  const many = Array.from({ length: maxListedErrors + 50 }, (_, i) => fieldErrors.required(`spec.items[${i}].name`));
  const status = errors.invalid('example.com', 'Widget', 'w', many).toStatus();
  assert.equal(status.code, 422);
  assert.equal(status.details!.causes!.length, maxListedErrors + 1);
  assert.equal(status.details!.causes!.at(-1)!.message, `Invalid value: too many errors, only the first ${maxListedErrors} are listed; correct them to see the rest`);
  assert.ok(!status.message!.includes(`spec.items[${maxListedErrors}].name`));
  // Errors with long texts (a schema's long pattern in each) are listed within a budget, the first always.
  const long = Array.from({ length: 5 }, (_, i) => fieldErrors.invalid(`spec.items[${i}]`, 'x', `should match '${'a'.repeat(maxListedErrorsText / 2)}'`));
  const cut = errors.invalid('example.com', 'Widget', 'w', long).toStatus();
  assert.deepEqual(cut.details!.causes!.map((c) => c.field), ['spec.items[0]', '<nil>']);
  assert.equal(cut.details!.causes![1]!.message, 'Invalid value: too many errors, only the first 1 is listed; correct them to see the rest');
  assert.ok(cut.message!.length < maxListedErrorsText * 2);
  // Upstream's aggregate writes each distinct error once; the causes keep them all.
  const twice = errors.invalid('', 'Pod', 'p', [fieldErrors.required('spec.x'), fieldErrors.required('spec.x')]).toStatus();
  assert.equal(twice.message, 'Pod "p" is invalid: spec.x: Required value');
  assert.equal(twice.details!.causes!.length, 2);
});

test('uniqueItems, object enums and set lists compare values, not key order, in one pass', () => {
  const unique = compileSchema(listOf({ type: 'object', [markers.preserveUnknownFields]: true }, { uniqueItems: true }));
  assert.equal(unique.validate({ spec: { items: [{ a: 1, b: 2 }, { b: 2, a: 1 }] } }).length, 1);
  assert.equal(unique.validate({ spec: { items: [{ a: 1 }, { a: '1' }, { a: [1] }, { a: ['1'] }, { a: 1n }] } }).length, 0);
  const big = Array.from({ length: 20_000 }, (_, i) => ({ i }));
  assert.equal(unique.validate({ spec: { items: big } }).length, 0);
  const objects = compileSchema(listOf({ type: 'object', [markers.preserveUnknownFields]: true, enum: [{ a: 1, b: [2] }] }));
  assert.equal(objects.validate({ spec: { items: [{ b: [2], a: 1 }] } }).length, 0);
  assert.equal(objects.validate({ spec: { items: [{ a: 1, b: [3] }] } }).length, 1);
  const set = compileSchema(listOf({ type: 'object', [markers.preserveUnknownFields]: true }, { [markers.listType]: 'set' }));
  assert.deepEqual(set.validate({ spec: { items: [{ a: 1, b: 2 }, { b: 2, a: 1 }] } }).map((e) => e.field), ['spec.items[1]']);
});
