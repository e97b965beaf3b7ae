// Stored objects read in part: metadata-only readers parse the head of the
// stored JSON alone, and must see what a whole decode would show them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StoredObject, toStoredBytes } from '../../../src/registry/objects.js';

test('metadataObject parses the head alone and agrees with the whole decode, whatever the strings hold', () => {
  const tricky = ['}', '{', ']', '[', '"', '\\', '\\"}', '"metadata":{', 'é ü 日本'];
  for (const text of tricky) {
    const obj = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: {
        name: 'cm', namespace: 'ns', labels: { app: text }, annotations: { [`k${text.length}`]: `{${text}}` },
        managedFields: [{ manager: text, operation: 'Update', fieldsV1: { 'f:data': { [`f:${text}`]: {} } } }],
      },
      data: { payload: `${text}"}]` },
    };
    const kv = { key: '/registry/configmaps/ns/cm', value: toStoredBytes(obj), createRevision: 3, modRevision: 7 };
    const meta = new StoredObject(kv).metadataObject();
    const whole = new StoredObject(kv).object;
    assert.deepEqual(meta, { apiVersion: whole.apiVersion, kind: whole.kind, metadata: whole.metadata }, JSON.stringify(text));
    assert.equal(meta.metadata?.resourceVersion, '7');
    assert.equal((meta as Record<string, unknown>).data, undefined, 'the rest is not parsed');
  }
  // Not our layout: the whole decode is used.
  const odd = { key: '/registry/configmaps/ns/x', value: Buffer.from('{"kind":"ConfigMap","apiVersion":"v1"}'), createRevision: 1, modRevision: 2 };
  assert.deepEqual(new StoredObject(odd).metadataObject(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: '2' } });
});
