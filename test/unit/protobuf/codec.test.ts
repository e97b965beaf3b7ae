import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  builtinSchemaLookup, decodeMessage, decodeProtobufObject, encodeMessage, encodeProtobufObject, listSchemaOf,
} from '../../../src/api/protobuf/index.js';
import { coreV1Kinds } from '../../../src/api/core/v1/index.js';
import { Reader } from '../../../src/machinery/protobufwire.js';
import { namedSchemas, p, resolve, t, type Schema } from '../../../src/api/schema.js';
import { DeleteOptions, Status, WatchEvent } from '../../../src/api/meta/v1.js';
import { canonical, deleteOptions, samples, status } from './fixtures.js';
import { stringify } from 'yaml';
import { decodeObject } from '../../../src/api/decode.js';
import { readJson, readYaml } from '../../../src/api/wire.js';

const lookup = builtinSchemaLookup(coreV1Kinds);
const schemaFor = (o: { apiVersion?: string; kind?: string }) => lookup(o.apiVersion!, o.kind!)!;
const roundTrip = (o: Record<string, unknown>) => decodeProtobufObject(encodeProtobufObject(o, schemaFor(o)), lookup);

test('every core v1 kind survives a round trip unchanged', () => {
  for (const kind of coreV1Kinds) {
    const ofKind = samples.filter((s) => s.kind === kind.kind);
    assert.ok(ofKind.length, `a sample of ${kind.kind}`);
    for (const sample of ofKind) assert.deepEqual(roundTrip(sample), canonical(sample), `${kind.kind} ${sample.metadata?.name}`);
  }
});

test('every core v1 sample survives JSON and YAML through the decoder unchanged', () => {
  for (const sample of samples) {
    const kind = coreV1Kinds.find((k) => k.kind === sample.kind)!;
    const read = (value: unknown) => decodeObject(kind, value, { fieldValidation: 'Strict', warnings: [] });
    const what = `${sample.kind} ${sample.metadata?.name}`;
    assert.deepEqual(read(readJson(JSON.stringify(sample)).value), canonical(sample), `${what} (JSON)`);
    assert.deepEqual(read(readYaml(stringify(canonical(sample))).value), canonical(sample), `${what} (YAML)`);
  }
});

test('every core v1 list survives a round trip, and an empty list keeps its items', () => {
  for (const kind of coreV1Kinds) {
    const items = samples.filter((s) => s.kind === kind.kind).map(({ apiVersion, kind, ...rest }) => rest);
    const list = { apiVersion: 'v1', kind: kind.listKind, metadata: { resourceVersion: '99', continue: 'tok', remainingItemCount: 0 }, items };
    assert.deepEqual(roundTrip(list), canonical(list), kind.listKind);
    const empty = { apiVersion: 'v1', kind: kind.listKind, metadata: {}, items: [] };
    assert.deepEqual(roundTrip(empty), empty);
  }
});

test('a list encodes with the kind schema too, and decodes through the item lookup', () => {
  const list = { apiVersion: 'v1', kind: 'SecretList', metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'a' }, type: 'Opaque' }] };
  const secret = lookup('v1', 'Secret')!;
  const bytes = encodeProtobufObject(list, secret);
  assert.deepEqual(bytes, encodeProtobufObject(list, listSchemaOf(secret)));
  const onlyItems = (_version: string, k: string) => (k === 'Secret' ? secret : undefined);
  assert.deepEqual(decodeProtobufObject(bytes, onlyItems), list);
});

test('Status, DeleteOptions and WatchEvent survive a round trip', () => {
  assert.deepEqual(roundTrip(status), status);
  assert.deepEqual(roundTrip(deleteOptions), deleteOptions);
  const event = { type: 'ADDED', object: canonical(samples[2]) };
  assert.deepEqual(decodeMessage(encodeMessage(event, WatchEvent), WatchEvent), event);
  // A protobuf watch stream embeds the object already encoded: bytes go in as they are.
  const inner = encodeProtobufObject(samples[2], schemaFor(samples[2]));
  const framed = encodeMessage({ type: 'ADDED', object: inner }, WatchEvent);
  const r = new Reader(framed);
  assert.deepEqual(r.tag(), { field: 1, wireType: 2 });
  assert.equal(r.string(), 'ADDED');
  assert.deepEqual(r.tag(), { field: 2, wireType: 2 });
  const raw = new Reader(r.bytes());
  assert.deepEqual(raw.tag(), { field: 1, wireType: 2 });
  assert.deepEqual(Buffer.from(raw.bytes()), inner);
  assert.deepEqual(lookup('meta.k8s.io/v1', 'DeleteOptions'), DeleteOptions);
  assert.deepEqual(lookup('v1', 'Status'), Status);
});

test('decoding drops empty value fields but keeps set pointers', () => {
  const ns = lookup('v1', 'Namespace')!;
  const sa = lookup('v1', 'ServiceAccount')!;
  // Empty strings and a zero generation are not sent back, as JSON omitempty would not.
  const decoded = decodeMessage(encodeMessage({ metadata: { name: 'x', generation: 0, uid: '' }, status: { phase: '' } }, ns), ns);
  assert.deepEqual(decoded, { metadata: { name: 'x' }, spec: {}, status: {} });
  // A *bool set to false and a *int64 set to 0 mean something: they stay.
  assert.deepEqual(decodeMessage(encodeMessage({ automountServiceAccountToken: false }, sa), sa).automountServiceAccountToken, false);
  const meta = decodeMessage(encodeMessage({ metadata: { deletionGracePeriodSeconds: 0 } }, sa), sa).metadata as Record<string, unknown>;
  assert.equal(meta.deletionGracePeriodSeconds, 0);
});

test('times: second precision for Time, microseconds for MicroTime, zero time omitted', () => {
  const ev = lookup('v1', 'Event')!;
  const decoded = decodeMessage(encodeMessage({
    firstTimestamp: '2024-01-02T03:04:05.987Z',
    lastTimestamp: '2024-01-02T05:04:05+02:00',
    eventTime: '2024-01-02T03:04:05.1234567Z',
    series: { lastObservedTime: '0001-01-01T00:00:00Z' },
    involvedObject: { name: 'x' },
  }, ev), ev);
  assert.equal(decoded.firstTimestamp, '2024-01-02T03:04:05Z');
  assert.equal(decoded.lastTimestamp, '2024-01-02T03:04:05Z');
  assert.equal(decoded.eventTime, '2024-01-02T03:04:05.123456Z');
  assert.deepEqual(decoded.series, {});
  // Before the epoch the seconds are negative.
  assert.equal(decodeMessage(encodeMessage({ firstTimestamp: '1969-12-31T23:59:59Z' }, ev), ev).firstTimestamp, '1969-12-31T23:59:59Z');
});

/** A length-delimited field with a one-byte tag and length, built by hand. */
function ld(field: number, body: Buffer | string): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  assert.ok(field < 16 && b.length < 128);
  return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
}

test('int-or-string values travel as the IntOrString message', () => {
  const schema = t.object({ port: p(4, t.intOrString()), other: p(5, t.intOrString()) });
  const bytes = encodeMessage({ port: 8080, other: 'http' }, schema);
  // port: {type 0, intVal 8080, strVal ""}; other: {type 1, intVal 0, strVal "http"}; all three always written
  assert.equal(bytes.toString('hex'), '2207' + '0800' + '10903f' + '1a00' + '2a0a' + '0801' + '1000' + '1a0468747470');
  assert.deepEqual(decodeMessage(bytes, schema), { port: 8080, other: 'http' });
});

test('unknown fields are skipped and a message sent twice merges', () => {
  const cm = lookup('v1', 'ConfigMap')!;
  const unknown = Buffer.from(
    'b801' + '05' // field 23, varint 5
    + 'fd01' + '01020304' // field 31, fixed32
    + 'fa01' + '02' + 'abcd' // field 31, bytes
    + 'f101' + '0102030405060708', // field 30, fixed64
    'hex');
  const bytes = Buffer.concat([
    ld(2, Buffer.concat([ld(1, 'a'), ld(2, '1')])), // data a=1
    unknown,
    ld(1, ld(1, 'a')), // metadata {name a}
    ld(1, ld(11, Buffer.concat([ld(1, 'x'), ld(2, 'y')]))), // metadata again {labels x=y}: merges
  ]);
  assert.deepEqual(decodeMessage(bytes, cm), { data: { a: '1' }, metadata: { name: 'a', labels: { x: 'y' } } });
});

test('packed repeated scalars are accepted on read', () => {
  const schema = t.object({ ports: p(3, t.array(t.int32())), flags: p(4, t.array(t.bool())) });
  const bytes = Buffer.from('1a03' + '01027f' + '2002' + '2200', 'hex'); // packed ports, one unpacked flag, an empty packed run
  assert.deepEqual(decodeMessage(bytes, schema), { ports: [1, 2, 127], flags: [true] });
  assert.deepEqual(decodeMessage(encodeMessage({ ports: [1, -2] }, schema), schema), { ports: [1, -2] });
});

test('a wire type that does not fit the field is refused', () => {
  assert.throws(() => decodeMessage(Buffer.from('2001', 'hex'), t.object({ name: p(4, t.string()) })), /wrong wireType = 0 for field name/);
  assert.throws(() => decodeMessage(Buffer.from('1001', 'hex'), lookup('v1', 'ConfigMap')!), /wrong wireType/); // data as a varint
});

test('map keys named __proto__ stay plain keys', () => {
  const cm = lookup('v1', 'ConfigMap')!;
  const decoded = decodeMessage(ld(2, Buffer.concat([ld(1, '__proto__'), ld(2, 'xy')])), cm);
  const data = decoded.data as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(data), Object.prototype);
  assert.deepEqual(Object.keys(data), ['__proto__']);
  assert.equal(Object.getOwnPropertyDescriptor(data, '__proto__')?.value, 'xy');
});

test('within each message, proto field numbers are distinct', () => {
  const check = (name: string, s: Schema) => {
    const seen = new Map<number, string>();
    // An embedded Go struct is one field of its own number; its properties are numbered within it (checked as its own message).
    const embedded = new Set<string>();
    for (const inline of resolve(s).protoInline ?? []) {
      for (const prop of Object.keys(resolve(inline.schema).properties ?? {})) embedded.add(prop);
      seen.set(inline.proto, `embedded ${inline.schema.name}`);
      check(`${name} (embedded ${inline.schema.name})`, inline.schema);
    }
    for (const [prop, ps] of Object.entries(resolve(s).properties ?? {})) {
      if (ps.proto === undefined || embedded.has(prop)) continue;
      assert.ok(!seen.has(ps.proto), `${name}: ${prop} and ${seen.get(ps.proto)} share number ${ps.proto}`);
      seen.set(ps.proto, prop);
    }
  };
  for (const [name, s] of namedSchemas(coreV1Kinds.map((k) => k.schema))) check(name, s);
  for (const k of coreV1Kinds) {
    check(k.kind, k.schema);
    // Everything a kind declares but apiVersion and kind travels in protobuf.
    for (const [prop, ps] of Object.entries(k.schema.properties ?? {})) {
      if (prop !== 'apiVersion' && prop !== 'kind') assert.ok(ps.proto !== undefined, `${k.kind}.${prop} has a field number`);
    }
  }
});
