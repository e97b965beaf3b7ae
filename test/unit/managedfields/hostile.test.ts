// Hostile input to field ownership: keys naming Object.prototype members in
// objects and field sets, smuggled or oversized managedFields entries, and
// nesting at and past the limit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/machinery/errors.js';
import { maxNestingDepth } from '../../../src/machinery/limits.js';
import {
  applyObject, compareValues, decodeManagedFields, FieldSet, fromFieldsV1, mergeValues, removeItems, toFieldSet, toFieldsV1,
  updateManagedFields, validateManagedFields, type ApplyOptions, type ManagedFieldsEntry, type UpdateOptions,
} from '../../../src/machinery/managedfields/index.js';
import { lastAppliedAnnotation } from '../../../src/machinery/managedfields/lastapplied.js';
import { fieldPE as f, parsePE } from '../../../src/machinery/managedfields/pathelement.js';
import { map, podType, scalar, struct, untypedT } from '../patch/fixtures.js';

type Obj = Record<string, any>;
const specialKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
const parse = (text: string): any => JSON.parse(text);
const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const ownGet = (o: object, k: string) => Object.getOwnPropertyDescriptor(o, k)?.value;

const cmType = struct({
  apiVersion: scalar, kind: scalar,
  metadata: struct({ name: scalar, namespace: scalar, labels: map(scalar), annotations: map(scalar), managedFields: untypedT }),
  data: map(scalar), binaryData: map(scalar), extra: untypedT,
});
const t0 = new Date('2024-01-01T00:00:00Z');
const applyOpts = (manager: string, extra: Partial<ApplyOptions> = {}): ApplyOptions => ({ manager, typeInfo: cmType, apiVersion: 'v1', now: t0, ...extra });
const updateOpts = (manager: string, extra: Partial<UpdateOptions> = {}): UpdateOptions => ({ manager, typeInfo: cmType, apiVersion: 'v1', now: t0, ...extra });
/** A ConfigMap configuration from JSON text of its data, so that `__proto__` is an own key. */
const cm = (dataJson: string, extra = ''): Obj => parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"${extra}},"data":${dataJson}}`);
const entry = (obj: Obj, manager: string) => (obj.metadata.managedFields as ManagedFieldsEntry[]).find((e) => e.manager === manager);

function assertPristine(): void {
  assert.equal(({} as Obj).ref, undefined);
  for (const k of ['ref', 'v', 'x']) assert.ok(!own(Object.prototype, k), `Object.prototype.${k}`);
  assert.equal(({}).constructor, Object);
}

function throwsApi(fn: () => unknown, code: number, message: string | RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, code);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

test('field sets: special keys are ordinary path elements, through FieldsV1 and back', () => {
  for (const k of specialKeys) {
    const obj = parse(`{"data":{"${k}":"v"},"extra":{"${k}":{"${k}":1}}}`);
    const set = toFieldSet(obj, cmType);
    assert.ok(set.has([f('data'), f(k)]), k);
    assert.ok(set.has([f('extra'), f(k), f(k)]), k);
    assert.ok(!set.has([f('data'), f('other')]));
    const wire = toFieldsV1(set);
    // A map key (not a declared field) holding a map is owned itself too: the `.` marker.
    assert.deepEqual(wire, parse(`{"f:data":{"f:${k}":{}},"f:extra":{"f:${k}":{".":{},"f:${k}":{}}}}`));
    assert.ok(fromFieldsV1(wire).equals(set));
    assert.equal(parsePE(`f:${k}`).constructor, Object);
  }
  // A FieldsV1 key that is not a path element is refused, whatever its name.
  assert.throws(() => fromFieldsV1(parse('{"__proto__":{}}')), /missing colon/);
  assertPristine();
});

test('merge and compare: special keys are present or absent by own keys only', () => {
  for (const k of specialKeys) {
    const live = parse(`{"data":{"a":"1"}}`);
    const config = parse(`{"data":{"${k}":"2"}}`);
    const merged = mergeValues(live, config, cmType) as Obj;
    assert.deepEqual(Object.keys(merged.data), ['a', k]);
    assert.equal(ownGet(merged.data, k), '2');
    assert.equal(Object.getPrototypeOf(merged.data), Object.prototype);
    // Added and removed, never "modified" against an inherited member; equal values are no change.
    const added = compareValues(live, merged, cmType);
    assert.ok(added.added.has([f('data'), f(k)]), k);
    assert.ok(added.modified.isEmpty() && added.removed.isEmpty(), k);
    const removed = compareValues(merged, live, cmType);
    assert.ok(removed.removed.has([f('data'), f(k)]), k);
    const same = compareValues(merged, structuredClone(merged), cmType);
    assert.ok(same.added.isEmpty() && same.modified.isEmpty() && same.removed.isEmpty(), k);
    // Removing the owned key keeps the rest.
    const left = removeItems(merged, FieldSet.of([f('data'), f(k)]), cmType) as Obj;
    assert.deepEqual(left, { data: { a: '1' } });
  }
  assertPristine();
});

test('apply: special keys are kept, owned, conflicted on and released like any key', () => {
  for (const k of specialKeys) {
    // Manager a owns data.<k>, b owns data.b.
    const a = applyObject(undefined, cm(`{"${k}":"eA=="}`), applyOpts('a')).object as Obj;
    assert.equal(ownGet(a.data, k), 'eA==', k);
    assert.deepEqual(entry(a, 'a')?.fieldsV1, parse(`{"f:data":{"f:${k}":{}}}`));
    // b applies another key without the special one: no false conflict, nothing of a's removed.
    const b = applyObject(a, cm('{"b":"1"}'), applyOpts('b')).object as Obj;
    assert.equal(ownGet(b.data, k), 'eA==', k);
    assert.equal(b.data.b, '1');
    // b forces a new value of a's key: b owns it, a keeps nothing else, the other keys stay.
    throwsApi(() => applyObject(b, cm(`{"${k}":"eQ=="}`), applyOpts('b')), 409, `Apply failed with 1 conflict: conflict with "a": .data.${k}`);
    const forced = applyObject(b, cm(`{"b":"1"}`), applyOpts('b', { force: true })).object as Obj;
    assert.equal(ownGet(forced.data, k), 'eA==', `force without the key keeps ${k}`);
    const taken = applyObject(b, cm(`{"b":"1","${k}":"eQ=="}`), applyOpts('b', { force: true })).object as Obj;
    assert.equal(ownGet(taken.data, k), 'eQ==', k);
    assert.equal(entry(taken, 'a'), undefined);
    // b drops it again: nobody else owns it, so it goes; b's other key stays.
    const dropped = applyObject(taken, cm('{"b":"1"}'), applyOpts('b')).object as Obj;
    assert.ok(!own(dropped.data, k), k);
    assert.deepEqual(dropped.data, { b: '1' });
    // Labels too, and an ordinary update taking the key over.
    const labelled = applyObject(undefined, cm('{}', `,"labels":{"${k}":"x"}`), applyOpts('a')).object as Obj;
    assert.equal(ownGet(labelled.metadata.labels, k), 'x');
    const edited = structuredClone(labelled);
    Object.defineProperty(edited.metadata.labels, k, { value: 'y', enumerable: true, writable: true, configurable: true });
    const updated = updateManagedFields(labelled, edited, updateOpts('editor')).object as Obj;
    assert.equal(ownGet(updated.metadata.labels, k), 'y');
    assert.deepEqual(entry(updated, 'editor')?.fieldsV1, parse(`{"f:metadata":{"f:labels":{"f:${k}":{}}}}`));
    assertPristine();
  }
});

test('the last-applied annotation: special keys, and JSON nested too deeply inside it, do no harm', () => {
  const annotated = (text: string) => parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{${JSON.stringify(lastAppliedAnnotation)}:${JSON.stringify(text)}}},"data":{"__proto__":"1"}}`);
  // Written by kubectl's client-side apply with __proto__: a server-side apply by kubectl may take it.
  const live = updateManagedFields(undefined, annotated('{"apiVersion":"v1","kind":"ConfigMap","data":{"__proto__":"1"}}'), updateOpts('kubectl-client-side-apply')).object as Obj;
  const taken = applyObject(live, cm('{"__proto__":"2"}'), applyOpts('kubectl')).object as Obj;
  assert.equal(ownGet(taken.data, '__proto__'), '2');
  // An annotation nested past the limit is not used: the conflict stands, as for an unreadable one.
  const deep = `{"apiVersion":"v1","kind":"ConfigMap","extra":${'{"a":'.repeat(100000)}1${'}'.repeat(100000)}}`;
  const deepLive = updateManagedFields(undefined, annotated(deep), updateOpts('kubectl-client-side-apply')).object as Obj;
  throwsApi(() => applyObject(deepLive, cm('{"__proto__":"2"}'), applyOpts('kubectl')), 409, /^Apply failed with 1 conflict/);
  assertPristine();
});

test('managedFields entries are validated as upstream validates them', () => {
  const e = (over: Obj) => ({ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {}, ...over });
  assert.deepEqual(validateManagedFields([e({})]), []);
  const errs = validateManagedFields([
    e({ manager: 'x'.repeat(5000) }), e({ operation: 'Delete' }), e({ fieldsType: 'FieldsV2' }),
    e({ subresource: 's'.repeat(257) }), e({ manager: 'a\u0007b' }), e({ manager: 'é'.repeat(65) }),
  ]);
  assert.deepEqual(errs.map((x) => x.describe()), [
    'metadata.managedFields[0].manager: Too long: may not be more than 128 bytes',
    'metadata.managedFields[1].operation: Invalid value: "Delete": must be `Apply` or `Update`',
    'metadata.managedFields[2].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
    'metadata.managedFields[3].subresource: Too long: may not be more than 256 bytes',
    'metadata.managedFields[4].manager: Invalid value: "a\\u0007b": invalid character U+0007 (at position 1)',
    'metadata.managedFields[5].manager: Too long: may not be more than 128 bytes',
  ]);
  assert.deepEqual(errs.map((x) => x.type), ['FieldValueTooLong', 'FieldValueInvalid', 'FieldValueInvalid', 'FieldValueTooLong', 'FieldValueInvalid', 'FieldValueTooLong']);
  // A requested entry the field manager can read is kept as sent: its manager reaches validation.
  const kept = updateManagedFields(undefined, cm('{"a":"1"}', `,"managedFields":[${JSON.stringify(e({ manager: 'x'.repeat(5000), fieldsV1: { 'f:data': { 'f:z': {} } } }))}]`), updateOpts('w')).object as Obj;
  assert.ok(kept.metadata.managedFields.some((x: ManagedFieldsEntry) => x.manager === 'x'.repeat(5000)));
});

test('managedFields: a key with JSON nested too deeply makes the requested entries unreadable, not a crash', () => {
  const deepValue = `v:${'['.repeat(100000)}${']'.repeat(100000)}`;
  assert.throws(() => parsePE(deepValue), /nested too deeply/);
  assert.throws(() => parsePE(`k:{"name":${'['.repeat(600)}${']'.repeat(600)}}`), /nested too deeply/);
  const requested = [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { [deepValue]: {} } } }];
  assert.throws(() => decodeManagedFields(requested), /nested too deeply/);
  // The write goes on with the live entries, as for any unreadable list.
  const live = updateManagedFields(undefined, cm('{"a":"1"}'), updateOpts('first')).object as Obj;
  const next = cm('{"a":"2"}');
  next.metadata.managedFields = requested;
  const out = updateManagedFields(live, next, updateOpts('second')).object as Obj;
  assert.deepEqual(out.metadata.managedFields.map((x: ManagedFieldsEntry) => x.manager), ['first', 'second']);
  assert.deepEqual(entry(out, 'second')?.fieldsV1, { 'f:data': { 'f:a': {} } });
});

test('many Update entries are merged into ancient-changes, every field kept', () => {
  const n = 20000;
  const entries = Array.from({ length: n }, (_, i) => ({
    manager: `m${i}`, operation: 'Update', apiVersion: 'v1', time: new Date(t0.getTime() + i * 1000).toISOString().replace('.000Z', 'Z'),
    fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { [`f:k${i}`]: {} } },
  }));
  const next = cm('{}');
  next.metadata.managedFields = entries;
  const out = updateManagedFields(undefined, next, updateOpts('w', { now: new Date('2030-01-01T00:00:00Z') })).object as Obj;
  const result = out.metadata.managedFields as ManagedFieldsEntry[];
  assert.equal(result.length, 10);
  const ancient = result.find((x) => x.manager === 'ancient-changes')!;
  // The writer's own entry is the newest; with it, the eight newest stay, the others are merged.
  assert.equal(Object.keys((ancient.fieldsV1 as Obj)['f:data']).length, n - 8);
  assert.deepEqual(result.filter((x) => x.manager !== 'ancient-changes').map((x) => x.manager),
    [...Array.from({ length: 8 }, (_, i) => `m${n - 8 + i}`), 'w']);
});

test('depth: written objects and applied configurations at the limit work, past it are a 400', () => {
  // managedFields[0].fieldsV1 is the deep part: root 1, metadata 2, managedFields 3, entry 4, fieldsV1 5.
  const fields = (levels: number) => `${'{"f:a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
  const withFields = (levels: number) => cm('{"x":"1"}', `,"managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${fields(levels)}}]`);
  const atLimit = withFields(maxNestingDepth - 4);
  const created = updateManagedFields(undefined, atLimit, updateOpts('w')).object as Obj;
  const kept = entry(created, 'm')!;
  let depth = 0;
  for (let v: any = kept.fieldsV1; v && typeof v === 'object' && Object.keys(v).length; v = v['f:a']) depth++;
  assert.equal(depth, maxNestingDepth - 5);
  // Every later write and apply over it works.
  const updated = updateManagedFields(created, { ...structuredClone(created), data: { x: '2' } }, updateOpts('w2')).object as Obj;
  assert.equal(updated.data.x, '2');
  const applied = applyObject(updated, cm('{"y":"1"}'), applyOpts('a')).object as Obj;
  assert.deepEqual(applied.data, { x: '2', y: '1' });
  assert.ok(entry(applied, 'm'));
  const tooDeep = 'the object provided is nested too deeply: exceeded max depth of 500';
  throwsApi(() => updateManagedFields(created, withFields(maxNestingDepth - 3), updateOpts('w')), 400, tooDeep);
  throwsApi(() => updateManagedFields(undefined, withFields(3000), updateOpts('w')), 400, tooDeep);
  // An applied configuration past the limit.
  const deepConfig = cm('{}');
  deepConfig.extra = parse(`${'{"a":'.repeat(maxNestingDepth - 1)}1${'}'.repeat(maxNestingDepth - 1)}`);
  assert.ok(applyObject(undefined, deepConfig, applyOpts('a')));
  deepConfig.extra = { a: deepConfig.extra };
  throwsApi(() => applyObject(undefined, deepConfig, applyOpts('a')), 400, tooDeep);
});

test('field sets built from deep values and many fields', () => {
  // A path 450 elements long, and 20000 sibling members: built and serialized without copying paths per member.
  let deep: Obj = {};
  const leafParent = deep;
  for (let i = 0; i < 20000; i++) leafParent[`k${i}`] = 'v';
  for (let i = 0; i < 450; i++) deep = { a: deep };
  const set = toFieldSet({ extra: deep }, cmType);
  const path = [f('extra'), ...Array.from({ length: 450 }, () => f('a'))];
  assert.ok(set.has([...path, f('k0')]));
  assert.ok(set.has([...path, f('k19999')]));
  assert.ok(fromFieldsV1(toFieldsV1(set)).equals(set));
  const union = new FieldSet().addAll(set).addAll(FieldSet.of([f('other')]));
  assert.ok(union.has([...path, f('k5')]) && union.has([f('other')]));
  assert.ok(!set.has([f('other')]), 'addAll copies, the source is unchanged');
  assert.ok(podType);
});
