// The schema validator's errors where upstream's validator (kube-openapi's
// validate package, as apiextensions turns its results into field errors)
// gives them: every check of a node runs whatever the others found (a
// value of the wrong type is checked against its enum too); a format is a
// type of its own for numbers, booleans and objects; allOf, anyOf, oneOf
// and not report their complaint under the nil path, and a failed anyOf or
// oneOf the errors of the alternative that got furthest, not of the one
// with the fewest errors. The rows marked `upstream` are the cases of
// apiextensions-apiserver's validation_test.go (TestValidateCustomResource),
// here with the order our validator gives (upstream compares them as sets).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { compileSchema, markers, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { withOurMarkers } from '../../../../src/api/apiextensions/schema.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

const messages = (schema: JSONSchemaProps, value: unknown): string[] => compileSchema(schema).validate(value).map((e) => e.describe());
const fieldOf = (s: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { field: s } });

/** `whole`: the values are whole objects, not the value of `field`. */
interface Row { name: string; schema: JSONSchemaProps; good?: unknown[]; bad: [unknown, ...string[]][]; whole?: boolean }

const typeOf = (expected: string, found: string) => `field: Invalid value: "${found}": field in body must be of type ${expected}: "${found}"`;
const anyOfField = '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)';

const rows: Row[] = [
  {
    name: 'upstream: !nullable', schema: fieldOf({ type: 'object' }), good: [{}],
    bad: [['foo', typeOf('object', 'string')], [42, typeOf('object', 'integer')], [true, typeOf('object', 'boolean')], [1.2, typeOf('object', 'number')],
      [[], typeOf('object', 'array')], [null, typeOf('object', 'null')]],
  },
  { name: 'upstream: nullable', schema: fieldOf({ type: 'object', nullable: true }), good: [{}, null], bad: [['foo', typeOf('object', 'string')], [[], typeOf('object', 'array')]] },
  { name: 'upstream: nullable and no type', schema: fieldOf({ nullable: true }), good: [{}, null, 'foo', 42, true, 1.2, []], bad: [] },
  {
    name: 'upstream: x-kubernetes-int-or-string', schema: fieldOf({ [markers.intOrString]: true }), good: [42, 'foo'],
    bad: [[null, typeOf('integer,string', 'null')], [true, typeOf('integer,string', 'boolean')], [1.2, typeOf('integer,string', 'number')],
      [{}, typeOf('integer,string', 'object')], [[], typeOf('integer,string', 'array')]],
  },
  {
    name: 'upstream: nullable, x-kubernetes-int-or-string and user-provided anyOf',
    schema: fieldOf({ nullable: true, [markers.intOrString]: true, anyOf: [{ type: 'integer' }, { type: 'string' }] }), good: [null, 42, 'foo'],
    bad: [
      [true, typeOf('integer,string', 'boolean'), anyOfField, typeOf('integer', 'boolean')],
      [1.2, typeOf('integer,string', 'number'), anyOfField, typeOf('integer', 'number')],
      [{}, typeOf('integer,string', 'object'), anyOfField, typeOf('integer', 'object')],
      [[], typeOf('integer,string', 'array'), anyOfField, typeOf('integer', 'array')],
    ],
  },
  {
    name: 'upstream: nullable, x-kubernetes-int-or-string and user-provided allOf',
    schema: fieldOf({ nullable: true, [markers.intOrString]: true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }] }), good: [null, 42, 'foo'],
    bad: [[true, typeOf('integer,string', 'boolean'), anyOfField, typeOf('integer', 'boolean'), '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated']],
  },
  {
    name: 'upstream: required field', whole: true, schema: { type: 'object', required: ['field'], properties: { field: { type: 'object', required: ['nested'], properties: { nested: {} } } } },
    bad: [[{ test: 'a' }, 'field: Required value'], [{ field: {} }, 'field.nested: Required value']],
  },
  {
    name: 'upstream: enum (a value of the wrong type is checked against the enum too)',
    schema: fieldOf({ type: 'object', required: ['nestedint', 'nestedstring'], properties: { nestedint: { type: 'integer', enum: [1, 2] }, nestedstring: { type: 'string', enum: ['a', 'b'] } } }),
    bad: [
      [{}, 'field.nestedint: Required value', 'field.nestedstring: Required value'],
      [{ nestedint: 'x', nestedstring: true }, 'field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"',
        'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
        'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"',
        'field.nestedstring: Unsupported value: true: supported values: "a", "b"'],
    ],
  },
  {
    name: 'a string checks its bounds and pattern up to the first that fails, then its format',
    schema: fieldOf({ type: 'string', minLength: 12, maxLength: 15, pattern: '^[0-9.]+$', format: 'ipv4' }), good: ['192.168.100.10'],
    bad: [
      ['10.0.0.1', 'field: Invalid value: "10.0.0.1": field in body should be at least 12 chars long'],
      ['2001:db8::1:2:3:4', 'field: Too long: may not be more than 15 bytes', 'field: Invalid value: "2001:db8::1:2:3:4": field in body must be of type ipv4: "2001:db8::1:2:3:4"'],
      ['1.2.3.4.5.6.7.8', 'field: Invalid value: "1.2.3.4.5.6.7.8": field in body must be of type ipv4: "1.2.3.4.5.6.7.8"'],
      ['a1.22.33.44.55', 'field: Invalid value: "a1.22.33.44.55": field in body should match \'^[0-9.]+$\'', 'field: Invalid value: "a1.22.33.44.55": field in body must be of type ipv4: "a1.22.33.44.55"'],
    ],
  },
  {
    name: 'a number is checked for multipleOf, then minimum, then maximum',
    schema: fieldOf({ type: 'number', multipleOf: 2, minimum: 10, maximum: 5 }),
    bad: [[7, 'field: Invalid value: 7: field in body should be a multiple of 2', 'field: Invalid value: 7: field in body should be greater than or equal to 10', 'field: Invalid value: 7: field in body should be less than or equal to 5']],
  },
  {
    name: 'a format is a type for values that are not strings (a number names its Go format)',
    schema: fieldOf({ type: 'string', format: 'ipv4' }), good: ['10.0.0.1'],
    bad: [
      [5, 'field: Invalid value: "int64": field in body must be of type ipv4: "int64"'],
      [1.5, 'field: Invalid value: "float64": field in body must be of type ipv4: "float64"'],
      [true, 'field: Invalid value: "": field in body must be of type ipv4: ""'],
      [{}, 'field: Invalid value: "": field in body must be of type ipv4: ""'],
    ],
  },
  {
    name: 'a format inside a combinator, on a value of another type',
    schema: fieldOf({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] }), good: ['10.0.0.1', '::1'],
    bad: [[7, anyOfField, 'field: Invalid value: "int64": field in body must be of type ipv4: "int64"'], ['x', anyOfField, 'field: Invalid value: "x": field in body must be of type ipv4: "x"']],
  },
  {
    name: 'a format upstream does not support is no type either', schema: fieldOf({ type: 'integer', format: 'int32' }), good: [2 ** 40], bad: [],
  },
  {
    name: 'a null is checked against the enum too', schema: fieldOf({ type: 'string', nullable: true, enum: ['a'] }), good: ['a'],
    bad: [[null, 'field: Unsupported value: "null": supported values: "a"']],
  },
  {
    name: 'oneOf reports the failing alternative that got furthest, not the one with the fewest errors',
    schema: fieldOf({
      type: 'object',
      oneOf: [{ required: ['a', 'b'] }, { properties: { c: { properties: { d: { minLength: 3 }, e: { minLength: 3 } } } } }],
      properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'object', properties: { d: { type: 'string' }, e: { type: 'string' } } } },
    }),
    good: [{ a: 'x', b: 'y', c: { d: 'x' } }],
    bad: [[{ a: 'x', c: { d: 'x', e: 'y' } }, '<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found none valid',
      'field.c.d: Invalid value: "x": field.c.d in body should be at least 3 chars long', 'field.c.e: Invalid value: "y": field.c.e in body should be at least 3 chars long']],
  },
  {
    name: 'anyOf stops at the first alternative that passes; oneOf counts them all',
    schema: fieldOf({ type: 'integer', anyOf: [{ minimum: 0 }, { maximum: 10 }], oneOf: [{ minimum: 0 }, { maximum: 10 }] }), good: [-1, 11],
    bad: [[5, '<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives']],
  },
  {
    name: 'allOf reports each alternative\'s errors once, then its complaint',
    schema: fieldOf({ type: 'object', allOf: [{ required: ['a'] }, { required: ['a', 'b'] }] }), good: [{ a: 1, b: 2 }],
    bad: [[{ a: 1 }, 'field.b: Required value', '<nil>: Invalid value: "": "field" must validate all the schemas (allOf)'],
      [{}, 'field.a: Required value', 'field.b: Required value', '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated']],
  },
  {
    name: 'not', schema: fieldOf({ type: 'string', not: { enum: ['admin'] } }), good: ['user'],
    bad: [['admin', '<nil>: Invalid value: "": "field" must not validate the schema (not)']],
  },
];

describe('schema errors as upstream\'s validator gives them', () => {
  for (const row of rows) {
    test(row.name, () => {
      const wrap = (v: unknown) => (row.whole ? v : { field: v });
      for (const good of row.good ?? []) assert.deepEqual(messages(row.schema, wrap(good)), [], `${JSON.stringify(good)} is valid`);
      for (const [bad, ...expected] of row.bad) assert.deepEqual(messages(row.schema, wrap(bad)), expected, JSON.stringify(bad));
    });
  }
});

describe('Gateway API\'s addresses (its real schema)', () => {
  const file = fileURLToPath(new URL('../../../../../test/fixtures/operators/gateway-api/standard/gateway.networking.k8s.io_gateways.yaml', import.meta.url));
  const crd = parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJS();
  const schema = withOurMarkers(crd.spec.versions.find((v: { name: string }) => v.name === 'v1').schema.openAPIV3Schema);
  const gateway = (addresses: unknown[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'g' },
    spec: { gatewayClassName: 'c', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], addresses },
  });

  test('addresses of each type that fit their schema pass', () => {
    assert.deepEqual(messages(schema, gateway([{ type: 'IPAddress', value: '10.0.0.1' }, { type: 'IPAddress', value: '2001:db8::1' }, { type: 'Hostname', value: 'gw.example.com' }])), []);
  });

  test('an IPAddress that is not an IP names the value and its formats, after the oneOf and anyOf they failed', () => {
    assert.deepEqual(messages(schema, gateway([{ type: 'IPAddress', value: 'not-an-ip' }])), [
      '<nil>: Invalid value: "": "spec.addresses[0]" must validate one and only one schema (oneOf). Found none valid',
      '<nil>: Invalid value: "": "spec.addresses[0].value" must validate at least one schema (anyOf)',
      'spec.addresses[0].value: Invalid value: "not-an-ip": spec.addresses[0].value in body must be of type ipv4: "not-an-ip"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });
});
