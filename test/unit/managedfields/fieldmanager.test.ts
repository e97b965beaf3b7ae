import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/machinery/errors.js';
import {
  applyObject, fieldPaths, updateManagedFields, type ApplyOptions, type UpdateOptions,
} from '../../../src/machinery/managedfields/fieldmanager.js';
import type { ManagedFieldsEntry } from '../../../src/machinery/managedfields/entries.js';
import { lastAppliedAnnotation } from '../../../src/machinery/managedfields/lastapplied.js';
import { podType } from '../patch/fixtures.js';

type Obj = Record<string, any>;
const t0 = new Date('2024-01-01T00:00:00Z');
const t1 = new Date('2024-01-01T00:01:00Z');

const applyOpts = (manager: string, extra: Partial<ApplyOptions> = {}): ApplyOptions =>
  ({ manager, typeInfo: podType, apiVersion: 'v1', now: t0, ...extra });
const updateOpts = (manager: string, extra: Partial<UpdateOptions> = {}): UpdateOptions =>
  ({ manager, typeInfo: podType, apiVersion: 'v1', now: t1, ...extra });

const cfg = (spec?: Obj, meta: Obj = {}): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ...meta }, ...(spec ? { spec } : {}),
});

const entry = (obj: Obj, manager: string, operation = 'Apply'): ManagedFieldsEntry | undefined =>
  (obj.metadata.managedFields as ManagedFieldsEntry[] | undefined)?.find((e) => e.manager === manager && e.operation === operation);

function conflict(fn: () => unknown, message: string, fields: Array<[string, string]>) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, 409);
    assert.equal(e.reason, 'Conflict');
    assert.equal(e.message, message);
    assert.deepEqual(e.details?.causes?.map((c) => [c.field, c.message]), fields.map(([field, m]) => [field, m]));
    assert.ok(e.details?.causes?.every((c) => c.reason === 'FieldManagerConflict'));
    return true;
  });
}

test('apply creates the object and records an Apply entry without identity fields', () => {
  const r = applyObject(undefined, cfg({ replicas: 1 }, { labels: { app: 'x' } }), applyOpts('a'));
  assert.equal(r.changed, true);
  assert.deepEqual(r.managedFields, [{
    manager: 'a', operation: 'Apply', apiVersion: 'v1', time: '2024-01-01T00:00:00Z', fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } },
  }]);
  const created = r.object as Obj;
  assert.deepEqual(created.metadata.managedFields, r.managedFields);
  assert.equal(created.spec.replicas, 1);
});

test('ownership table: conflict, force, co-ownership, release, removal, non-apply writes', () => {
  const a1 = applyObject(undefined, cfg({ replicas: 1 }), applyOpts('a')).object as Obj;
  // Owned by A; B applies a different value without force: conflict, nothing changes.
  conflict(() => applyObject(a1, cfg({ replicas: 2 }), applyOpts('b')),
    'Apply failed with 1 conflict: conflict with "a": .spec.replicas', [['.spec.replicas', 'conflict with "a"']]);
  // With force: owned by B only, removed from A's entry (A had nothing else: entry gone).
  const forced = applyObject(a1, cfg({ replicas: 2 }), applyOpts('b', { force: true })).object as Obj;
  assert.equal(forced.spec.replicas, 2);
  assert.equal(entry(forced, 'a'), undefined);
  assert.deepEqual(entry(forced, 'b')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  // Same value: owned jointly, no change to the object.
  const shared = applyObject(a1, cfg({ replicas: 1 }), applyOpts('b', { now: t1 }));
  assert.equal(shared.changed, false);
  assert.deepEqual(entry(shared.object as Obj, 'a')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  assert.deepEqual(entry(shared.object as Obj, 'b')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  // Owned by A and B; B omits it: owned by A only, value unchanged.
  const released = applyObject(shared.object as Obj, cfg(undefined), applyOpts('b')).object as Obj;
  assert.equal(released.spec.replicas, 1);
  assert.equal(entry(released, 'b'), undefined);
  assert.ok(entry(released, 'a'));
  // A omits a field nobody else owns: it is removed.
  const a2 = applyObject(a1, cfg({ replicas: 1, paused: true }), applyOpts('a')).object as Obj;
  const dropped = applyObject(a2, cfg({ paused: true }), applyOpts('a')).object as Obj;
  assert.deepEqual(dropped.spec, { paused: true });
  // Non-apply write changing A's field: the writer owns it, no conflict.
  const edited = { ...structuredClone(a1), spec: { replicas: 5 } };
  const u = updateManagedFields(a1, edited, updateOpts('kubectl-edit')).object as Obj;
  assert.equal(entry(u, 'a'), undefined);
  assert.deepEqual(entry(u, 'kubectl-edit', 'Update'), {
    manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', time: '2024-01-01T00:01:00Z', fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {} } },
  });
  // ...and a later apply of another value conflicts with the updater, named with its version.
  conflict(() => applyObject(u, cfg({ replicas: 3 }), applyOpts('a')),
    'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .spec.replicas',
    [['.spec.replicas', 'conflict with "kubectl-edit" using v1']]);
});

test('several conflicts are listed per manager', () => {
  const a = applyObject(undefined, cfg({ replicas: 1, paused: false }, { labels: { x: '1' } }), applyOpts('a')).object as Obj;
  const b = applyObject(a, cfg(undefined, { labels: { y: '1' } }), applyOpts('b')).object as Obj;
  conflict(() => applyObject(b, cfg({ replicas: 2, paused: true }, { labels: { x: '2', y: '2' } }), applyOpts('c')),
    'Apply failed with 4 conflicts: conflicts with "a":\n- .metadata.labels.x\n- .spec.paused\n- .spec.replicas\nconflicts with "b":\n- .metadata.labels.y',
    [['.metadata.labels.x', 'conflict with "a"'], ['.spec.paused', 'conflict with "a"'], ['.spec.replicas', 'conflict with "a"'], ['.metadata.labels.y', 'conflict with "b"']]);
});

test('keyed lists and sets are shared item by item; atomic lists conflict as a whole', () => {
  const a = applyObject(undefined, cfg({ containers: [{ name: 'x', image: 'x:1' }], tags: ['t1'], hosts: ['h1'] }), applyOpts('a')).object as Obj;
  const b = applyObject(a, cfg({ containers: [{ name: 'y', image: 'y:1' }], tags: ['t2'] }), applyOpts('b')).object as Obj;
  assert.deepEqual(b.spec.containers.map((c: Obj) => c.name), ['x', 'y']);
  assert.deepEqual(b.spec.tags, ['t1', 't2']);
  assert.deepEqual(entry(b, 'b')?.fieldsV1, {
    'f:spec': { 'f:containers': { 'k:{"name":"y"}': { '.': {}, 'f:image': {}, 'f:name': {} } }, 'f:tags': { 'v:"t2"': {} } },
  });
  conflict(() => applyObject(b, cfg({ hosts: ['h2'] }), applyOpts('b')), 'Apply failed with 1 conflict: conflict with "a": .spec.hosts', [['.spec.hosts', 'conflict with "a"']]);
  // A drops its container and set item: removed, B's stay.
  const c = applyObject(b, cfg({ hosts: ['h1'] }), applyOpts('a')).object as Obj;
  assert.deepEqual(c.spec.containers.map((x: Obj) => x.name), ['y']);
  assert.deepEqual(c.spec.tags, ['t2']);
  // A co-owned item survives its applier's omission; a field in it only the leaver set goes.
  const shared = applyObject(b, cfg({ containers: [{ name: 'x', image: 'x:1' }] }), applyOpts('b')).object as Obj;
  const kept = applyObject(shared, cfg({ hosts: ['h1'] }), applyOpts('a')).object as Obj;
  assert.deepEqual(kept.spec.containers, [{ name: 'x', image: 'x:1' }]);
  // list-map keys with several fields, one defaulted
  const ports = applyObject(undefined, cfg({ containers: [{ name: 'x', ports: [{ containerPort: 53, protocol: 'UDP' }, { containerPort: 53 }] }] }), applyOpts('a'));
  assert.deepEqual(Object.keys(ports.managedFields[0].fieldsV1!['f:spec'] as Obj), ['f:containers']);
  assert.deepEqual(Object.keys(((ports.managedFields[0].fieldsV1!['f:spec'] as Obj)['f:containers']['k:{"name":"x"}']['f:ports'])),
    ['k:{"containerPort":53,"protocol":"TCP"}', 'k:{"containerPort":53,"protocol":"UDP"}']);
});

test('apply refuses managedFields in the body and duplicate or invalid list items (400)', () => {
  const bad = (body: Obj, message: string) => assert.throws(() => applyObject(undefined, body, applyOpts('a', { objectDescription: 'default/p; /v1, Kind=Pod' })),
    (e: unknown) => e instanceof ApiError && e.code === 400 && e.reason === 'BadRequest' && e.message === message);
  bad(cfg({}, { managedFields: [] }), 'metadata.managedFields must be nil');
  bad(cfg({ containers: [{ name: 'x' }, { name: 'x' }] }),
    'failed to create typed patch object (default/p; /v1, Kind=Pod): .spec.containers: duplicate entries for key [name="x"]');
  bad(cfg({ containers: [{ image: 'i' }], tags: ['a', 'a'] }),
    'failed to create typed patch object (default/p; /v1, Kind=Pod): errors:\n  .spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)\n  .spec.tags: duplicate entries for key [="a"]');
  // null managedFields is accepted, like an absent list
  assert.ok(applyObject(undefined, cfg({ replicas: 1 }, { managedFields: null }), applyOpts('a')));
});

test('non-apply writes: create, no-op, reset with one empty entry, empty list kept, request entries honoured', () => {
  const created = updateManagedFields(undefined, cfg({ replicas: 1 }, { labels: { app: 'x' } }), updateOpts('kubectl-create')).object as Obj;
  assert.deepEqual(entry(created, 'kubectl-create', 'Update')?.fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { '.': {}, 'f:replicas': {} },
  });
  const withApply = applyObject(created, cfg({ paused: true }), applyOpts('a')).object as Obj;
  // nothing changed: entries and times untouched
  const same = updateManagedFields(withApply, structuredClone(withApply), updateOpts('other', { now: new Date('2030-01-01T00:00:00Z') })).object as Obj;
  assert.deepEqual(same.metadata.managedFields, withApply.metadata.managedFields);
  // a list of one empty entry clears everything first; the writer then owns what it changed
  const resetBody = structuredClone(withApply);
  resetBody.metadata.managedFields = [{}];
  resetBody.metadata.labels.extra = 'y';
  const reset = updateManagedFields(withApply, resetBody, updateOpts('kubectl-patch')).object as Obj;
  assert.deepEqual(reset.metadata.managedFields.map((e: ManagedFieldsEntry) => e.manager), ['kubectl-patch']);
  assert.deepEqual(entry(reset, 'kubectl-patch', 'Update')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:extra': {} } } });
  // an empty list does not reset; nor does an unreadable one
  for (const mf of [[], [{ manager: 'x' }], 'junk']) {
    const body = structuredClone(withApply);
    body.metadata.managedFields = mf;
    const kept = updateManagedFields(withApply, body, updateOpts('w')).object as Obj;
    assert.deepEqual(kept.metadata.managedFields, withApply.metadata.managedFields, JSON.stringify(mf));
  }
  // entries sent by the client replace the live ones (clients may edit them)
  const edited = structuredClone(withApply);
  edited.metadata.managedFields = edited.metadata.managedFields.filter((e: ManagedFieldsEntry) => e.manager === 'a');
  const honoured = updateManagedFields(withApply, edited, updateOpts('w')).object as Obj;
  assert.deepEqual(honoured.metadata.managedFields.map((e: ManagedFieldsEntry) => e.manager), ['a']);
  // a sub-resource write ignores the request's entries and records its sub-resource
  const status = structuredClone(withApply);
  status.metadata.managedFields = [{}];
  status.status = { phase: 'Running' };
  const st = updateManagedFields(withApply, status, updateOpts('kubelet', { subresource: 'status' })).object as Obj;
  assert.equal(st.metadata.managedFields.length, 3);
  assert.deepEqual(entry(st, 'kubelet', 'Update')?.subresource, 'status');
  assert.deepEqual(entry(st, 'kubelet', 'Update')?.fieldsV1, { 'f:status': { '.': {}, 'f:phase': {} } });
});

test('ignored fields are never owned; a manager entry is per operation and version', () => {
  const liveObj = applyObject(undefined, cfg({ replicas: 1 }), applyOpts('a')).object as Obj;
  const next = { ...structuredClone(liveObj), status: { phase: 'X' } };
  const u = updateManagedFields(liveObj, next, updateOpts('w', { ignoredFields: fieldPaths('status') })).object as Obj;
  assert.equal(entry(u, 'w', 'Update'), undefined);
  const applied = applyObject(liveObj, { ...cfg({ replicas: 1 }), status: { phase: 'Y' } }, applyOpts('a', { ignoredFields: fieldPaths('status') }));
  assert.deepEqual(entry(applied.object as Obj, 'a')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  // Update entries are kept per apiVersion; Apply entries are not
  const v1 = updateManagedFields(liveObj, { ...structuredClone(liveObj), spec: { replicas: 2 } }, updateOpts('w')).object as Obj;
  const v2 = updateManagedFields(v1, { ...structuredClone(v1), spec: { replicas: 3 } }, updateOpts('w', { apiVersion: 'v2' })).object as Obj;
  assert.deepEqual(v2.metadata.managedFields.map((e: ManagedFieldsEntry) => `${e.manager}/${e.operation}/${e.apiVersion}`), ['w/Update/v2']);
  const again = applyObject(v2, cfg({ replicas: 3 }), applyOpts('a', { apiVersion: 'v2', force: true })).object as Obj;
  assert.deepEqual(again.metadata.managedFields.map((e: ManagedFieldsEntry) => `${e.manager}/${e.operation}/${e.apiVersion}`), ['a/Apply/v2', 'w/Update/v2']);
});

test('entries are ordered Apply first, then by time and manager; old Update entries are merged past ten', () => {
  let obj = applyObject(undefined, cfg({ replicas: 0 }), applyOpts('z')).object as Obj;
  for (let i = 0; i < 11; i++) {
    const next = structuredClone(obj);
    next.metadata.labels = { ...(next.metadata.labels ?? {}), [`l${i}`]: 'x' };
    obj = updateManagedFields(obj, next, updateOpts(`m${String(i).padStart(2, '0')}`, { now: new Date(Date.UTC(2024, 0, 1, 0, i)) })).object as Obj;
  }
  const names = obj.metadata.managedFields.map((e: ManagedFieldsEntry) => e.manager);
  assert.equal(names[0], 'z');
  assert.equal(names.length, 11);
  assert.ok(names.includes('ancient-changes'));
  assert.ok(!names.includes('m00') && !names.includes('m01'));
  const ancient = entry(obj, 'ancient-changes', 'Update')!;
  assert.deepEqual(ancient.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:l0': {}, 'f:l1': {} } } });
  assert.equal(ancient.time, '2024-01-01T00:01:00Z');
});

test('kubectl moves from client-side to server-side apply without conflicts on last-applied fields', () => {
  const lastApplied = JSON.stringify(cfg({ replicas: 1 }));
  const csa = updateManagedFields(undefined, cfg({ replicas: 1 }, { annotations: { [lastAppliedAnnotation]: lastApplied } }), updateOpts('kubectl-client-side-apply')).object as Obj;
  // another manager would conflict
  assert.throws(() => applyObject(csa, cfg({ replicas: 2 }), applyOpts('other')), (e: unknown) => e instanceof ApiError && e.code === 409);
  const ssa = applyObject(csa, cfg({ replicas: 2 }), applyOpts('kubectl')).object as Obj;
  assert.equal(ssa.spec.replicas, 2);
  assert.deepEqual(entry(ssa, 'kubectl')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  assert.equal(ssa.metadata.annotations[lastAppliedAnnotation], '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"replicas":2}}\n');
  // a value changed since the last client-side apply still conflicts
  const drifted = updateManagedFields(csa, { ...structuredClone(csa), spec: { replicas: 7 } }, updateOpts('kubectl-edit')).object as Obj;
  assert.throws(() => applyObject(drifted, cfg({ replicas: 2 }), applyOpts('kubectl')), (e: unknown) => e instanceof ApiError && e.code === 409);
});
