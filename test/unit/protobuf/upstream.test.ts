// Byte-exact checks against upstream's encoding. The expected bytes are written
// out by hand, field by field, from the generated.proto definitions and the way
// upstream's generated marshalers write them (value fields always, pointer
// fields when set, fields in number order, map entries sorted by key); the
// first ones are what the real kubectl v1.32 sends for `kubectl create ...`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinSchemaLookup, decodeProtobufObject, encodeProtobufObject } from '../../../src/api/protobuf/index.js';
import { coreV1Kinds } from '../../../src/api/core/v1/index.js';

const lookup = builtinSchemaLookup(coreV1Kinds);
const bytes = (...parts: string[]) => Buffer.from(parts.join('').replace(/\s+/g, ''), 'hex');
const ascii = (s: string) => Buffer.from(s).toString('hex');

function assertBoth(wire: Buffer, obj: Record<string, unknown>) {
  assert.deepEqual(decodeProtobufObject(wire, lookup), obj, 'decode');
  const encoded = encodeProtobufObject(obj, lookup(obj.apiVersion as string, obj.kind as string)!);
  assert.equal(encoded.toString('hex'), wire.toString('hex'), 'encode');
}

/** ObjectMeta with only `name`, `namespace` set, as a Go client writes it: every value field present. */
const emptyMetaAfterName = '1200 1a00 2200 2a00 3200 3800 4200'; // generateName namespace selfLink uid resourceVersion generation creationTimestamp

test('kubectl create namespace x', () => {
  const wire = bytes(
    '6b387300', // magic
    '0a0f', '0a02', ascii('v1'), '1209', ascii('Namespace'), // typeMeta {apiVersion, kind}
    '1219', // raw: Namespace, 25 bytes
    '  0a11', '0a01', ascii('x'), emptyMetaAfterName, // metadata
    '  1200', // spec {}
    '  1a02 0a00', // status {phase ""}
    '1a00 2200', // contentEncoding "", contentType ""
  );
  assertBoth(wire, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' }, spec: {}, status: {} });
});

test('kubectl create secret generic s1 --from-file=b=<binary> --from-literal=a=hello', () => {
  const wire = bytes(
    '6b387300',
    '0a0c', '0a02', ascii('v1'), '1206', ascii('Secret'),
    '122d',
    '  0a12', '0a02', ascii('s1'), emptyMetaAfterName,
    '  120a', '0a01', ascii('a'), '1205', ascii('hello'), // data entry a
    '  1209', '0a01', ascii('b'), '1204', '0001fffe', // data entry b: raw bytes
    '  1a00', // type ""
    '1a00 2200',
  );
  assertBoth(wire, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { a: 'aGVsbG8=', b: 'AAH//g==' } });
});

test('kubectl create serviceaccount sa1 and configmap cm1', () => {
  assertBoth(bytes(
    '6b387300',
    '0a14', '0a02', ascii('v1'), '120e', ascii('ServiceAccount'),
    '1215', '0a13', '0a03', ascii('sa1'), emptyMetaAfterName,
    '1a00 2200',
  ), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa1' } });
  assertBoth(bytes(
    '6b387300',
    '0a0f', '0a02', ascii('v1'), '1209', ascii('ConfigMap'),
    '122a',
    '  0a13', '0a03', ascii('cm1'), emptyMetaAfterName,
    '  1206', '0a01', ascii('k'), '1201', ascii('v'), // data k=v
    '  1a0b', '0a03', ascii('bin'), '1204', '0001fffe', // binaryData bin
    '1a00 2200',
  ), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { k: 'v' }, binaryData: { bin: 'AAH//g==' } });
});

test('a namespace with a label, a creation time, a finalizer and a phase', () => {
  const wire = bytes(
    '6b387300',
    '0a0f', '0a02', ascii('v1'), '1209', ascii('Namespace'),
    '1241',
    '  0a27', // metadata, 39 bytes
    '    0a04', ascii('demo'),
    '    1200 1a00 2200 2a00 3200 3800',
    '    4208 08a5facdac06 1000', // creationTimestamp {seconds 1704164645 (2024-01-02T03:04:05Z), nanos 0}
    '    5a09 0a04', ascii('team'), '1201', ascii('a'), // labels entry
    '  120c 0a0a', ascii('kubernetes'), // spec {finalizers}
    '  1a08 0a06', ascii('Active'), // status {phase}
    '1a00 2200',
  );
  assertBoth(wire, {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { name: 'demo', creationTimestamp: '2024-01-02T03:04:05Z', labels: { team: 'a' } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
});

test('a secret with binary data, a type and immutable', () => {
  const wire = bytes(
    '6b387300',
    '0a0c', '0a02', ascii('v1'), '1206', ascii('Secret'),
    '1244',
    '  0a1a 0a03', ascii('tls'), '1200 1a07', ascii('default'), '2200 2a00 3200 3800 4200',
    '  120d 0a06', ascii('ca.crt'), '1203 00ff10', // data entries sorted by key
    '  120d 0a07', ascii('tls.key'), '1202 0102',
    '  1a06', ascii('Opaque'), // type
    '  2801', // immutable true (a *bool: written because set)
    '1a00 2200',
  );
  assertBoth(wire, {
    apiVersion: 'v1', kind: 'Secret',
    metadata: { name: 'tls', namespace: 'default' },
    data: { 'ca.crt': 'AP8Q', 'tls.key': 'AQI=' },
    type: 'Opaque',
    immutable: true,
  });
});

test('a NotFound status', () => {
  const message = 'namespaces "x" not found';
  const wire = bytes(
    '6b387300',
    '0a0c', '0a02', ascii('v1'), '1206', ascii('Status'),
    '124f',
    '  0a06 0a00 1200 1a00', // metadata: ListMeta {selfLink, resourceVersion, continue}
    '  1207', ascii('Failure'),
    '  1a18', ascii(message),
    '  2208', ascii('NotFound'),
    '  2a15 0a01', ascii('x'), '1200 1a0a', ascii('namespaces'), '2800 3200', // details {name, group, kind, retryAfterSeconds, uid}
    '  309403', // code 404
    '1a00 2200',
  );
  assertBoth(wire, {
    apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message, reason: 'NotFound',
    details: { name: 'x', kind: 'namespaces' }, code: 404,
  });
});
