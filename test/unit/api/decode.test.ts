// Decoding request bodies against the kinds' schemas, as upstream's typed
// decoder reads them. The integer and time tests walk every kind's schema, so
// a field added later is covered without naming it here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coreV1Kinds, configMaps, events, secrets } from '../../../src/api/core/v1/index.js';
import { resolve, type Schema } from '../../../src/api/schema.js';
import type { KindDefinition } from '../../../src/api/kind.js';
import { decodeObject, type DecodeOptions } from '../../../src/api/decode.js';
import { numberTextOf } from '../../../src/machinery/duplicates.js';
import { ApiError } from '../../../src/machinery/errors.js';
import { rfc3339Layout, rfc3339MicroLayout } from '../../../src/machinery/time.js';
import { validateObjectMeta } from '../../../src/machinery/objectmeta.js';
import { isDns1123Subdomain } from '../../../src/machinery/validation.js';

const prototypeNames = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];

interface Leaf {
  /** Segments from the top: field names, 0 for an array item, 'k' for a map entry. */
  path: Array<{ key: string | number; map: boolean }>;
  schema: Schema;
}

/** Every leaf of a schema whose type is `wanted`, through refs, arrays and maps. */
function leaves(schema: Schema, wanted: (s: Schema) => boolean, path: Leaf['path'] = [], out: Leaf[] = []): Leaf[] {
  const s = resolve(schema);
  if (path.length > 12) return out;
  if (wanted(s)) out.push({ path, schema: s });
  else if (s.type === 'array' && s.items) leaves(s.items, wanted, [...path, { key: 0, map: false }], out);
  else if (s.properties) for (const [k, v] of Object.entries(s.properties)) leaves(v, wanted, [...path, { key: k, map: false }], out);
  else if (s.additionalProperties) leaves(s.additionalProperties, wanted, [...path, { key: 'k', map: true }], out);
  return out;
}

const printed = (leaf: Leaf) => leaf.path.reduce((p, { key, map }) => (typeof key === 'number' || map ? `${p}[${key}]` : p ? `${p}.${key}` : key), '');

/** A body with `literal` (raw JSON text) at the leaf; metadata.name set unless the leaf is inside metadata. */
function bodyWith(kind: KindDefinition, leaf: Leaf, literal: string): string {
  const root: Record<string, any> = { apiVersion: 'v1', kind: kind.kind, metadata: { name: 'x' } };
  let at: any = root;
  leaf.path.forEach(({ key }, i) => {
    const last = i === leaf.path.length - 1;
    const next = last ? '\u0000LITERAL' : typeof leaf.path[i + 1].key === 'number' ? [] : {};
    if (at[key] === undefined || last) at[key] = next;
    at = at[key];
  });
  return JSON.stringify(root).replace('"\\u0000LITERAL"', literal);
}

const options = (text?: string): DecodeOptions => ({ fieldValidation: 'Strict', warnings: [], numberText: text === undefined ? undefined : numberTextOf(text) });
const decodeText = (kind: KindDefinition, text: string) => decodeObject(kind, JSON.parse(text), options(text));

function rejects(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    assert.equal(e.message, message);
    return true;
  });
}

const prefix = (kind: KindDefinition) => `${kind.kind} in version "v1" cannot be handled as a ${kind.kind}: `;

test('every integer field of every kind takes exactly its type\'s range, quoted as the client wrote it', () => {
  let checked = 0;
  for (const kind of coreV1Kinds) {
    for (const leaf of leaves(kind.schema, (s) => s.type === 'integer')) {
      const bits = leaf.schema.format === 'int32' ? 32 : 64;
      const [min, max] = bits === 32 ? ['-2147483648', '2147483647'] : ['-9223372036854775808', '9223372036854775807'];
      const tooBig = bits === 32 ? '2147483648' : '9223372036854775808';
      for (const ok of [min, max, '0', '-0', '7']) decodeText(kind, bodyWith(kind, leaf, ok));
      for (const bad of [tooBig, '18446744073709551616', '1e10', '1.0', '1.5', '-1E2', '1e400']) {
        rejects(() => decodeText(kind, bodyWith(kind, leaf, bad)),
          `${prefix(kind)}json: cannot unmarshal number ${bad} into Go struct field ${kind.kind}.${printed(leaf)} of type int${bits}`);
      }
      // Without the text (YAML, protobuf, patches) the number is quoted as Go prints a float64.
      rejects(() => decodeObject(kind, JSON.parse(bodyWith(kind, leaf, '1e20')), options()),
        `${prefix(kind)}json: cannot unmarshal number 100000000000000000000 into Go struct field ${kind.kind}.${printed(leaf)} of type int${bits}`);
      checked++;
    }
  }
  assert.ok(checked >= 4, `integer fields found: ${checked}`);
});

test('integers known only as doubles: int64 bounds as the doubles they round to', () => {
  const generation = (n: number) => decodeObject(configMaps, { metadata: { name: 'x', generation: n } }, options()).metadata!.generation;
  assert.equal(generation(2 ** 63), 2 ** 63); // the double nearest 2^63 - 1
  rejects(() => generation(2 ** 64), `${prefix(configMaps)}json: cannot unmarshal number 18446744073709552000 into Go struct field ConfigMap.metadata.generation of type int64`);
  rejects(() => generation(0.5), `${prefix(configMaps)}json: cannot unmarshal number 0.5 into Go struct field ConfigMap.metadata.generation of type int64`);
});

test('every time field of every kind is read with Go\'s layout and written back in UTC', () => {
  let checked = 0;
  for (const kind of coreV1Kinds) {
    for (const leaf of leaves(kind.schema, (s) => s.format === 'date-time')) {
      const micro = leaf.schema.protoMessage === 'microTime';
      const layout = micro ? rfc3339MicroLayout : rfc3339Layout;
      const refused: Array<[value: string, valueElem: string, layoutElem: string]> = [
        ['x', 'x', '2006'], ['', '', '2006'], ['2024-01-02', '', 'T'], ['2024-01-02T03:04:05.123456', '', 'Z07:00'],
      ];
      for (const [bad, valueElem, layoutElem] of refused) {
        rejects(() => decodeText(kind, bodyWith(kind, leaf, JSON.stringify(bad))),
          `${prefix(kind)}parsing time ${JSON.stringify(bad)} as "${layout}": cannot parse ${JSON.stringify(valueElem)} as "${layoutElem}"`);
      }
      for (const [wrong, type] of [['5', 'number'], ['true', 'bool'], ['{}', 'object'], ['[]', 'array']]) {
        rejects(() => decodeText(kind, bodyWith(kind, leaf, wrong)), `${prefix(kind)}json: cannot unmarshal ${type} into Go value of type string`);
      }
      const given = micro ? '2024-01-02T03:04:05.123456+02:00' : '2024-01-02T03:04:05.999+02:00';
      const decoded = decodeText(kind, bodyWith(kind, leaf, JSON.stringify(given)));
      const value = leaf.path.reduce((v: any, { key }) => v?.[key], decoded);
      assert.equal(value, micro ? '2024-01-02T01:04:05.123456Z' : '2024-01-02T01:04:05Z', printed(leaf));
      // Go's zero time is no time, and null is no value.
      for (const none of ['"0001-01-01T00:00:00Z"', 'null']) {
        const gone = decodeText(kind, bodyWith(kind, leaf, micro && none !== 'null' ? '"0001-01-01T00:00:00.000000Z"' : none));
        assert.equal(leaf.path.reduce((v: any, { key }) => v?.[key], gone), undefined, printed(leaf));
      }
      rejects(() => decodeText(kind, bodyWith(kind, leaf, micro ? '"9999-12-31T23:59:59.000000-01:00"' : '"9999-12-31T23:59:59-01:00"')),
        `${prefix(kind)}Time.MarshalJSON: year outside of range [0,9999]`);
      checked++;
    }
  }
  assert.ok(checked >= 8, `time fields found: ${checked}`);
});

test('a wrong type is remembered and the walk goes on; a bad time stops it at once, as upstream\'s decoder', () => {
  rejects(() => decodeText(events, '{"metadata":{"name":5},"count":1.5,"firstTimestamp":"x"}'),
    `${prefix(events)}parsing time "x" as "${rfc3339Layout}": cannot parse "x" as "2006"`);
  rejects(() => decodeText(events, '{"metadata":{"name":5},"count":1.5}'),
    `${prefix(events)}json: cannot unmarshal number into Go struct field Event.metadata.name of type string`);
  rejects(() => decodeText(secrets, '{"metadata":{"name":"s"},"data":{"a":"%%%%"},"type":5}'),
    `${prefix(secrets)}illegal base64 data at input byte 0`);
});

test('prototype names are ordinary keys in every map of every kind, and unknown fields at struct level', () => {
  for (const kind of coreV1Kinds) {
    for (const leaf of leaves(kind.schema, (s) => !!s.additionalProperties)) {
      const valueType = resolve(leaf.schema.additionalProperties!);
      // Quantities are read as quantities (and written back canonical): the i-th key holds i+1.
      const quantity = valueType.protoMessage === 'quantity';
      const expected = (i: number) => (valueType.format === 'byte' ? 'eA==' : quantity ? String(i + 1) : `v${i}`);
      const entries = prototypeNames.map((k, i) => `${JSON.stringify(k)}:${valueType.format === 'byte' ? '"eA=="' : JSON.stringify(expected(i))}`).join(',');
      const text = bodyWith(kind, leaf, `{${entries}}`);
      const decoded = decodeText(kind, text);
      const map = leaf.path.reduce((v: any, { key }) => v?.[key], decoded);
      assert.equal(Object.getPrototypeOf(map), Object.prototype, printed(leaf));
      assert.deepEqual(Object.keys(map), prototypeNames, `${kind.kind}.${printed(leaf)}`);
      prototypeNames.forEach((k, i) => assert.equal(Object.getOwnPropertyDescriptor(map, k)?.value, expected(i)));
    }
  }
  const opts: DecodeOptions = { fieldValidation: 'Warn', warnings: [] };
  const top = decodeObject(configMaps, JSON.parse('{"metadata":{"name":"x","__proto__":{"name":"y"},"toString":1},"__proto__":{"data":{"a":"b"}},"constructor":{}}'), opts);
  assert.equal(Object.getPrototypeOf(top), Object.prototype);
  assert.equal(Object.getPrototypeOf(top.metadata!), Object.prototype);
  assert.equal(top.data, undefined);
  assert.equal(top.metadata!.name, 'x');
  assert.deepEqual(opts.warnings, ['unknown field "metadata.__proto__"', 'unknown field "metadata.toString"', 'unknown field "__proto__"', 'unknown field "constructor"']);
});

test('repeated keys come first among the strict decoding errors', () => {
  rejects(() => decodeObject(configMaps, { metadata: { name: 'x' }, bogus: 1 }, { fieldValidation: 'Strict', warnings: [], duplicates: ['duplicate field "data.a"'] }),
    'strict decoding error: duplicate field "data.a", unknown field "bogus"');
});

test('validation sees prototype names as the keys they are', () => {
  const cm = (data: object, binaryData: object = {}) => configMaps.strategy.validate!({ metadata: { name: 'x', namespace: 'n' }, data, binaryData });
  const own = (k: string, v: unknown) => JSON.parse(`{${JSON.stringify(k)}:${JSON.stringify(v)}}`);
  for (const k of prototypeNames) {
    // Every one of them is a valid config key ([-._a-zA-Z0-9]+), and none is "in binaryData" unless it is.
    assert.deepEqual(cm(own(k, 'v')), [], k);
    assert.deepEqual(cm({}, own(k, 'eA==')), [], k);
    assert.deepEqual(cm(own(k, 'v'), own(k, 'eA==')).map((e) => e.detail), ['duplicate of key present in binaryData'], k);
    const secret = (type: string, data: object) => secrets.strategy.validate!({ metadata: { name: 'x', namespace: 'n' }, type, data });
    assert.deepEqual(secret(k, own(k, 'eA==')), [], k);
  }
  const meta = (labels: object) => validateObjectMeta({ name: 'x', namespace: 'n', labels }, { namespaced: true, nameCheck: isDns1123Subdomain });
  assert.deepEqual(meta(own('toString', 'v')), []);
  assert.deepEqual(meta(own('hasOwnProperty', 'valueOf')), []);
  const proto = meta(own('__proto__', 'v'));
  assert.equal(proto.length, 1);
  assert.equal(proto[0].field, 'metadata.labels');
  assert.match(proto[0].detail ?? '', /name part must consist of alphanumeric characters/);
});
