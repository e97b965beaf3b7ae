import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  builtinSchemaLookup, decodeEnvelope, decodeProtobufObject, encodeEnvelope, encodeProtobufObject, isProtobufMediaType,
} from '../../../src/api/protobuf/index.js';
import { coreV1Kinds } from '../../../src/api/core/v1/index.js';
import { ApiError } from '../../../src/machinery/errors.js';
import { maxNestingDepth } from '../../../src/machinery/limits.js';
import { samples } from './fixtures.js';

const lookup = builtinSchemaLookup(coreV1Kinds);
const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');
const envelope = (raw: string, kind = 'Namespace') => encodeEnvelope('v1', kind, hex(raw));

function assertBadRequest(body: Buffer, pattern?: RegExp) {
  assert.throws(() => decodeProtobufObject(body, lookup), (e: unknown) => {
    assert.ok(e instanceof ApiError, `an ApiError, not ${String(e)}`);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

test('both binary media types are recognised, parameters or not', () => {
  assert.equal(isProtobufMediaType('application/vnd.kubernetes.protobuf'), true);
  assert.equal(isProtobufMediaType('application/vnd.plat.protobuf'), true);
  assert.equal(isProtobufMediaType('Application/VND.Kubernetes.Protobuf; charset=binary'), true);
  assert.equal(isProtobufMediaType('application/vnd.kubernetes.protobuf;stream=watch'), true);
  assert.equal(isProtobufMediaType('application/json'), false);
  assert.equal(isProtobufMediaType(''), false);
});

test('the envelope round-trips and names the object', () => {
  const env = decodeEnvelope(encodeEnvelope('v1', 'Secret', hex('0a00')));
  assert.deepEqual({ ...env, raw: Buffer.from(env.raw).toString('hex') }, { apiVersion: 'v1', kind: 'Secret', raw: '0a00', contentEncoding: '', contentType: '' });
});

test('a wrong prefix is refused with the upstream message', () => {
  assertBadRequest(Buffer.from('{"kind":"Namespace"}'), /does not appear to be a protobuf message, expected prefix \[107 56 115 0\]/);
  assertBadRequest(hex('6b3873'));
  assertBadRequest(Buffer.alloc(0));
});

test('malformed bytes are a 400', () => {
  assertBadRequest(hex('6b387300 0a'), /unexpected EOF/); // truncated tag length
  assertBadRequest(hex('6b387300 0a0f 0a02 7631'), /unexpected EOF/); // typeMeta longer than the body
  assertBadRequest(envelope('0a 80'), /unexpected EOF/); // truncated varint inside the object
  assertBadRequest(envelope('0aff ffff ffff ffff ffff 7f'), /overflow|EOF/); // absurd length
  assertBadRequest(envelope('0a05 0a01 78'), /unexpected EOF/); // metadata length past its end
  assertBadRequest(envelope('0a02 0801'), /wrong wireType/); // metadata.name as a varint
  assertBadRequest(envelope('0a04 4202 0880'), /unexpected EOF/); // creationTimestamp with a cut varint
  assertBadRequest(envelope('4c'), /end group/); // unknown field 9: a stray end-group
  assertBadRequest(envelope('4f'), /illegal wireType/); // unknown field 9, wire type 7
  assertBadRequest(hex('6b387300 08 01'), /wrong wireType/); // typeMeta as a varint
});

test('unknown kinds, missing kinds and foreign encodings are a 400', () => {
  assertBadRequest(encodeEnvelope('v1', 'Widget', hex('')), /no kind "Widget" is registered for version "v1"/);
  assertBadRequest(encodeEnvelope('apps/v1', 'Namespace', hex('')), /no kind "Namespace" is registered for version "apps\/v1"/);
  assertBadRequest(encodeEnvelope('v1', '', hex('')), /Kind/);
  assertBadRequest(encodeEnvelope('', 'Namespace', hex('')), /apiVersion/);
  const gzip = Buffer.concat([encodeEnvelope('v1', 'Namespace', hex('')), hex('1a04'), Buffer.from('gzip')]);
  assertBadRequest(gzip, /content encoding "gzip"/);
  const json = Buffer.concat([encodeEnvelope('v1', 'Namespace', hex('')), hex('2210'), Buffer.from('application/json')]);
  assertBadRequest(json, /content type "application\/json"/);
});

test('embedded JSON that does not parse is a 400', () => {
  // metadata.managedFields[0].fieldsV1.raw = "{"
  assertBadRequest(envelope('0a08 8a01 05 3a03 0a01 7b'), /JSON/);
});

test('mangled bytes never escape as anything but a 400', () => {
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (const sample of samples) {
    const good = encodeProtobufObject(sample, lookup(sample.apiVersion!, sample.kind!)!);
    for (let round = 0; round < 300; round++) {
      const bad = Buffer.from(good);
      const edits = 1 + rand(4);
      for (let i = 0; i < edits; i++) bad[4 + rand(bad.length - 4)] = rand(256);
      const cut = rand(3) === 0 ? bad.subarray(0, 4 + rand(bad.length - 4)) : bad;
      try {
        decodeProtobufObject(cut, lookup);
      } catch (e) {
        assert.ok(e instanceof ApiError && e.code === 400, `${sample.kind} round ${round}: ${String(e)}`);
      }
    }
  }
});

test('map keys named like Object.prototype members come off the wire as own keys', () => {
  const names = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
  const labels = JSON.parse(`{${names.map((n) => `${JSON.stringify(n)}:"v-${n}"`).join(',')}}`);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', labels }, data: labels };
  const decoded = decodeProtobufObject(encodeProtobufObject(cm, lookup('v1', 'ConfigMap')!), lookup);
  for (const map of [decoded.metadata!.labels, decoded.data]) {
    assert.equal(Object.getPrototypeOf(map), Object.prototype);
    assert.deepEqual(Object.keys(map).sort(), [...names].sort());
    for (const n of names) assert.equal(Object.getOwnPropertyDescriptor(map, n)?.value, `v-${n}`);
  }
});

test('JSON embedded in a message (fieldsV1) counts towards the nesting limit', () => {
  // The object (1), metadata (2), managedFields (3), an entry (4), fieldsV1 (5) and below.
  const fields = (levels: number) => {
    let v: Record<string, unknown> = {};
    for (let i = 1; i < levels; i++) v = { 'f:a': v };
    return v;
  };
  const cm = (levels: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd', managedFields: [{ manager: 'm', fieldsType: 'FieldsV1', fieldsV1: fields(levels) }] } });
  const schema = lookup('v1', 'ConfigMap')!;
  assert.ok(decodeProtobufObject(encodeProtobufObject(cm(maxNestingDepth - 4), schema), lookup));
  assertBadRequest(encodeProtobufObject(cm(maxNestingDepth - 3), schema), /nested too deeply/);
});

test('an object whose time cannot be read fails to encode with a plain error naming the field', () => {
  const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: { name: 'x' }, firstTimestamp: 'x' };
  assert.throws(() => encodeProtobufObject(event, lookup('v1', 'Event')!), (e: unknown) =>
    !(e instanceof ApiError) && /cannot encode field firstTimestamp as protobuf: parsing time "x"/.test((e as Error).message));
});
