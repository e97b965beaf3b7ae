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

test('objectWithoutManagedFields and metadataObject(true) cut them from the stored bytes and agree with the whole decode, wherever they are', () => {
  const tricky = ['}', ']', '"', '\\', '"managedFields":[', '\\"managedFields\\":[1],', 'é 日本'];
  const managedFields = [{ manager: 'm', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:managedFields': {} }, 'f:data': { '.': {} } } }];
  for (const text of tricky) {
    const layouts: Record<string, unknown>[] = [
      { name: 'cm', annotations: { [text]: text }, managedFields, uid: 'u' },
      { managedFields, name: 'cm', labels: { managedFields: text } },
      { name: 'cm', managedFields },
      { managedFields },
      { name: 'cm', annotations: { managedFields: text } },
      { name: 'cm', managedFields: null },
    ];
    for (const metadata of layouts) {
      const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { managedFields: text, [text]: '"managedFields":[]' } };
      const kv = { key: '/registry/configmaps/ns/cm', value: toStoredBytes(obj), createRevision: 3, modRevision: 7 };
      const whole = new StoredObject(kv).object;
      const { managedFields: _dropped, ...kept } = whole.metadata!;
      const defaulted: string[] = [];
      const cut = new StoredObject(kv, (o) => { defaulted.push(o.metadata!.name ?? ''); }).objectWithoutManagedFields();
      assert.deepEqual(cut, { ...whole, metadata: kept }, JSON.stringify({ text, metadata }));
      assert.equal(cut.metadata?.resourceVersion, '7');
      assert.equal(defaulted.length, 1, 'the kind\'s defaults are applied to the decode, as to any other');
      assert.ok(!Object.isFrozen(cut), 'the caller\'s own');
      const head = new StoredObject(kv).metadataObject(true);
      if (Array.isArray(metadata.managedFields) && Object.keys(metadata).length > 1) assert.equal(head.metadata?.managedFields, undefined, 'cut from the bytes');
      const { managedFields: _left, ...headMeta } = head.metadata!;
      assert.deepEqual({ ...head, metadata: headMeta }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: kept }, JSON.stringify({ text, metadata }));
    }
  }
});
