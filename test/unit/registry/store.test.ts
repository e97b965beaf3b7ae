// The generic store on the memory backend, with a small kind declared here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineKind, statusSubresource, type KubeObject } from '../../../src/api/kind.js';
import { define, t } from '../../../src/api/schema.js';
import { kindSchema } from '../../../src/api/core/v1/common.js';
import { ResourceStore, type RequestScope, type WriteOptions } from '../../../src/registry/store.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { ApiError } from '../../../src/machinery/errors.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { requestKind, requestResource, type Admission, type AdmissionRequest } from '../../../src/admission/types.js';
import { CacheSet } from '../../../src/storage/cache/index.js';
import { encodedWithVersionParts, storedFormOf } from '../../../src/registry/objects.js';
import { jobs } from '../../../src/api/batch/v1/job.js';

const widgetSchema = kindSchema('A test kind with spec and status.', {
  spec: t.object({ size: t.int32('How big.') }),
  status: t.object({ ready: t.bool('Whether ready.') }),
});
const widgets = defineKind({
  group: 'test.example', version: 'v1', kind: 'Widget', plural: 'widgets', scope: 'Cluster',
  schema: define('test.example.v1.Widget', widgetSchema),
  subresources: { status: statusSubresource }, tracksGeneration: true,
});

const opts = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Strict' });
const scope = (extra: Partial<RequestScope> = {}): RequestScope => ({ warnings: [], ...extra });
/** A body as a client sends it. */
const sent = (value: unknown) => ({ value });

function newStore() {
  return new ResourceStore(widgets, new MemoryBackend());
}

test('generation starts at 1 and moves only when the spec changes', async () => {
  const store = newStore();
  const created = await store.create(undefined, sent({ metadata: { name: 'w' }, spec: { size: 1 } }), opts(), scope());
  assert.equal(created.metadata!.generation, 1);
  const labelled = await store.update(undefined, 'w', sent({ ...created, metadata: { ...created.metadata, labels: { a: 'b' } } }), opts(), scope());
  assert.equal(labelled.object.metadata!.generation, 1);
  const resized = await store.update(undefined, 'w', sent({ ...labelled.object, spec: { size: 2 } }), opts(), scope());
  assert.equal(resized.object.metadata!.generation, 2);
});

test('main-resource writes keep status; the status sub-resource writes only status', async () => {
  const store = newStore();
  const created = await store.create(undefined, sent({ metadata: { name: 'w' }, spec: { size: 1 } }), opts(), scope());
  const withStatus = await store.update(undefined, 'w', sent({ ...created, spec: { size: 9 }, status: { ready: true } }), opts(), scope(), { subresource: 'status' });
  assert.deepEqual(withStatus.object.status, { ready: true });
  assert.deepEqual(withStatus.object.spec, { size: 1 }, 'a status write leaves spec alone');
  const main = await store.update(undefined, 'w', sent({ ...withStatus.object, status: { ready: false } }), opts(), scope());
  assert.deepEqual(main.object.status, { ready: true }, 'a main write leaves status alone');
});

test('an unchanged update writes nothing', async () => {
  const store = newStore();
  const created = await store.create(undefined, sent({ metadata: { name: 'w' }, spec: { size: 1 } }), opts(), scope());
  const same = await store.update(undefined, 'w', sent(created), opts(), scope());
  assert.equal(same.object.metadata!.resourceVersion, created.metadata!.resourceVersion);
});

test('finalizers hold a deleted object until the last one is removed', async () => {
  const store = newStore();
  await store.create(undefined, sent({ metadata: { name: 'w', finalizers: ['example.com/hold'] } }), opts(), scope());
  const first = await store.delete(undefined, 'w', {}, scope());
  assert.equal(first.removed, false);
  assert.ok(first.object.metadata!.deletionTimestamp);
  const held = await store.get(undefined, 'w');
  await assert.rejects(
    store.update(undefined, 'w', sent({ ...held, metadata: { ...held.metadata, finalizers: ['example.com/hold', 'example.com/more'] } }), opts(), scope()),
    (e: unknown) => e instanceof ApiError && e.code === 422,
  );
  await store.update(undefined, 'w', sent({ ...held, metadata: { ...held.metadata, finalizers: [] } }), opts(), scope());
  await assert.rejects(store.get(undefined, 'w'), (e: unknown) => e instanceof ApiError && e.code === 404);
});

test('delete preconditions and paging', async () => {
  const store = newStore();
  const w = await store.create(undefined, sent({ metadata: { name: 'w' } }), opts(), scope());
  await assert.rejects(store.delete(undefined, 'w', { preconditions: { uid: 'other' } }, scope()), (e: unknown) => e instanceof ApiError && e.code === 409);
  await assert.rejects(store.delete(undefined, 'w', { preconditions: { resourceVersion: '1' + w.metadata!.resourceVersion } }, scope()), (e: unknown) => e instanceof ApiError && e.code === 409);
  for (let i = 0; i < 9; i++) await store.create(undefined, sent({ metadata: { name: `p${i}`, labels: { odd: String(i % 2) } } }), opts(), scope());
  const page1 = await store.list(undefined, { limit: 4 });
  assert.equal(page1.items.length, 4);
  assert.equal(page1.metadata!.remainingItemCount, 6);
  const page2 = await store.list(undefined, { limit: 4, continue: page1.metadata!.continue });
  const page3 = await store.list(undefined, { limit: 4, continue: page2.metadata!.continue });
  assert.equal(page3.items.length, 2);
  assert.equal(page3.metadata!.continue, undefined);
  assert.equal(page2.metadata!.resourceVersion, page1.metadata!.resourceVersion);
  const names = [...page1.items, ...page2.items, ...page3.items].map((i: any) => i.metadata.name);
  assert.deepEqual(names, ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'w']);
  const odd = await store.list(undefined, { limit: 2, labelSelector: 'odd=1' });
  assert.deepEqual(odd.items.map((i: any) => i.metadata.name), ['p1', 'p3']);
  assert.equal(odd.metadata!.remainingItemCount, undefined);
  const oddRest = await store.list(undefined, { limit: 2, labelSelector: 'odd=1', continue: odd.metadata!.continue });
  assert.deepEqual(oddRest.items.map((i: any) => i.metadata.name), ['p5', 'p7']);
});

test('admission requests carry what an AdmissionReview needs', async () => {
  const seen: AdmissionRequest[] = [];
  const recorder: Admission = { mutate: async (r) => { seen.push(r); }, validate: async () => {} };
  const store = new ResourceStore(widgets, new MemoryBackend(), recorder);
  const user = { username: 'alice', groups: ['devs'] };
  const created = await store.create(undefined, sent({ metadata: { name: 'w' }, spec: { size: 1 } }), { ...opts(), manager: 'kubectl' }, scope({ user }));
  await store.update(undefined, 'w', sent({ ...created, status: { ready: true } }), { ...opts(), dryRun: true }, scope({ user }), { subresource: 'status' });
  await store.patch(undefined, 'w', { type: 'merge', value: { spec: { size: 2 } } }, opts(), scope({ user }));
  await store.delete(undefined, 'w', { propagationPolicy: 'Background' }, scope({ user }));
  assert.deepEqual(seen.map((r) => [r.operation, r.subresource, r.dryRun, r.options.kind]), [
    ['CREATE', undefined, false, 'CreateOptions'],
    ['UPDATE', 'status', true, 'UpdateOptions'],
    ['UPDATE', undefined, false, 'PatchOptions'],
    ['DELETE', undefined, false, 'DeleteOptions'],
  ]);
  assert.equal(new Set(seen.map((r) => r.uid)).size, 4, 'each request has a uid of its own');
  assert.ok(seen.every((r) => r.name === 'w' && r.user === user));
  assert.deepEqual(seen[0].options, { kind: 'CreateOptions', apiVersion: `${vocabulary.metaGroup}/v1`, fieldManager: 'kubectl' });
  assert.deepEqual(seen[1].options.dryRun, ['All']);
  assert.deepEqual(seen[3].options.propagationPolicy, 'Background');
  assert.equal(seen[1].oldObject?.metadata?.name, 'w');
  assert.equal(seen[3].object, undefined);
  assert.deepEqual(requestKind(seen[0]), { group: 'test.example', version: 'v1', kind: 'Widget' });
  assert.deepEqual(requestResource(seen[0]), { group: 'test.example', version: 'v1', resource: 'widgets' });
});

/** A store whose reads and update loops may use a watch cache, started by a first list. */
async function cachedStore() {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend);
  const store = new ResourceStore(widgets, backend, undefined, caches);
  await store.listStored(undefined, {});
  return { store, backend, caches };
}

test('an update that starts from a watch cache copy gone stale is made again from the store', async () => {
  const { store, backend, caches } = await cachedStore();
  try {
    const created = await store.create(undefined, sent({ metadata: { name: 'w' }, spec: { size: 1 } }), opts(), scope());
    await store.listStored(undefined, {}); // the cache has caught up with the create
    const key = store.key(undefined, 'w');
    for (let round = 2; round < 6; round++) {
      // Another writer goes straight to the store: until the feed delivers, the cache holds the older copy.
      const stored = (await backend.get(key))!;
      const other = { ...JSON.parse(stored.value.toString()), spec: { size: round * 10 } };
      const written = await backend.update(key, Buffer.from(JSON.stringify(other)), stored.modRevision);
      assert.notEqual(store.reader.cachedValue(key)?.modRevision, written.modRevision, 'the cache is behind here');
      // Pinned to the store's version: the cached copy says otherwise, the store decides.
      const pinned = await store.update(undefined, 'w', sent({
        metadata: { name: 'w', resourceVersion: String(written.modRevision) }, spec: { size: round },
      }), opts(), scope());
      assert.deepEqual(pinned.object.spec, { size: round });
      assert.equal(pinned.object.metadata!.uid, created.metadata!.uid);
      assert.equal(Number(pinned.object.metadata!.resourceVersion), written.modRevision + 1);
      // Unconditional, right after another direct write: applied on top of the newest version.
      const again = (await backend.get(key))!;
      const bumped = await backend.update(key, Buffer.from(again.value), again.modRevision);
      const replaced = await store.update(undefined, 'w', sent({ metadata: { name: 'w', labels: { round: String(round) } }, spec: { size: round } }), opts(), scope());
      assert.equal(Number(replaced.object.metadata!.resourceVersion), bumped.modRevision + 1);
      assert.deepEqual(replaced.object.metadata!.labels, { round: String(round) });
    }
    // A resourceVersion older than the store's is still a conflict once the store is asked.
    await assert.rejects(
      store.update(undefined, 'w', sent({ metadata: { name: 'w', resourceVersion: created.metadata!.resourceVersion }, spec: { size: 0 } }), opts(), scope()),
      (e: unknown) => e instanceof ApiError && e.code === 409,
    );
  } finally {
    await caches.stopAll();
  }
});

test('a write answers with the bytes it stored, the resourceVersion spliced in', async () => {
  const store = newStore();
  const created = await store.create(undefined, sent({ metadata: { name: 'w', labels: { a: 'b' } }, spec: { size: 1 } }), opts(), scope());
  const form = storedFormOf(created);
  assert.ok(form, 'a created object carries its stored form');
  assert.deepEqual(JSON.parse(Buffer.concat(encodedWithVersionParts(form)).toString()), JSON.parse(JSON.stringify(created)));
  const updated = await store.update(undefined, 'w', sent({ ...created, spec: { size: 2 } }), opts(), scope());
  assert.deepEqual(JSON.parse(Buffer.concat(encodedWithVersionParts(storedFormOf(updated.object)!)).toString()), JSON.parse(JSON.stringify(updated.object)));
  // Changed afterwards (another resourceVersion): no longer answered from the stored bytes.
  updated.object.metadata!.resourceVersion = '999';
  assert.equal(storedFormOf(updated.object), undefined);
  const dry = await store.update(undefined, 'w', sent({ metadata: { name: 'w' }, spec: { size: 3 } }), { ...opts(), dryRun: true }, scope());
  assert.equal(storedFormOf(dry.object), undefined, 'a dry run stored nothing');
});

test('admission reservations are given back when the write fails after admission; plugin warnings reach the client', async () => {
  const abandoned: string[] = [];
  const admission: Admission = {
    mutate: async (r) => { (r.warnings ??= []).push(`seen ${r.operation}`); },
    validate: async () => {},
    abandon: async (r) => { abandoned.push(`${r.operation} ${r.name}`); },
  };
  const store = new ResourceStore(widgets, new MemoryBackend(), admission);
  const first = scope();
  await store.create(undefined, sent({ metadata: { name: 'w' } }), opts(), first);
  assert.ok(first.warnings.includes('seen CREATE'), 'a plugin warning joins the answer');
  await assert.rejects(store.create(undefined, sent({ metadata: { name: 'w' } }), opts(), scope()), (e: unknown) => e instanceof ApiError && e.code === 409);
  await assert.rejects(store.create(undefined, sent({ metadata: { name: 'Bad_Name' } }), opts(), scope()), (e: unknown) => e instanceof ApiError && e.code === 422);
  assert.deepEqual(abandoned, ['CREATE w', 'CREATE Bad_Name']);
  assert.deepEqual((await store.list(undefined, {})).items.map((i: any) => i.metadata.name), ['w']);
});

test('a write that loses its race runs its change, the field manager and mutating admission again on the fresh object', async () => {
  const backend = new MemoryBackend();
  const mutated: string[] = [];
  const admission: Admission = {
    mutate: async (r) => { if (r.operation === 'UPDATE') mutated.push(r.object!.metadata!.labels?.other ?? '-'); },
    validate: async () => {},
  };
  const store = new ResourceStore(widgets, backend, admission);
  await store.create(undefined, sent({ metadata: { name: 'w' }, spec: { size: 1 } }), opts(), scope());
  // Another writer gets in between this write's read and its compare-and-swap, once.
  const update = backend.update.bind(backend);
  let raced = false;
  backend.update = async (key, value, expected) => {
    if (!raced) {
      raced = true;
      const stored = (await backend.get(key))!;
      const other = JSON.parse(stored.value.toString());
      other.metadata.labels = { other: 'yes' };
      await update(key, Buffer.from(JSON.stringify(other)), stored.modRevision);
    }
    return update(key, value, expected);
  };
  const { object } = await store.patch(undefined, 'w', { type: 'merge', value: { spec: { size: 2 } } }, { ...opts(), manager: 'resizer' }, scope());
  assert.deepEqual(object.spec, { size: 2 });
  assert.deepEqual(object.metadata!.labels, { other: 'yes' }, 'the patch was made again on top of the other write');
  assert.deepEqual(mutated, ['-', 'yes'], 'mutating admission saw the first try and the fresh object');
  const resizer = (object.metadata!.managedFields as Array<{ manager: string; fieldsV1: Record<string, unknown> }>).find((e) => e.manager === 'resizer');
  assert.deepEqual(resizer?.fieldsV1, { 'f:spec': { 'f:size': {} } }, 'the field manager worked on the fresh object: the other writer\'s label is not the patch\'s');
});

test('the kind\'s preparation runs once, after mutating admission, as upstream\'s: a webhook sees no generated selector, and what it adds is prepared with the rest', async () => {
  const seen: KubeObject[] = [];
  const admission: Admission = {
    mutate: async (r) => {
      seen.push(structuredClone(r.object!));
      r.object!.spec.template.metadata.labels.added = 'by-admission';
    },
    validate: async (r) => { seen.push(structuredClone(r.object!)); },
  };
  const store = new ResourceStore(jobs, new MemoryBackend(), admission);
  const job = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' },
    spec: { template: { metadata: { labels: { app: 'j' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
  };
  const created = await store.create('ns', sent(job), opts(), scope());
  const [mutating, validating] = seen;
  // Upstream's mutating webhooks see the object before PrepareForCreate: no selector, no labels the server generates.
  assert.equal(mutating!.spec.selector, undefined);
  assert.deepEqual(mutating!.spec.template.metadata.labels, { app: 'j' });
  assert.ok(mutating!.metadata!.uid, 'the uid the create will have is there already');
  const uid = created.metadata!.uid;
  assert.equal(mutating!.metadata!.uid, uid);
  assert.deepEqual(created.spec.selector, { matchLabels: { [vocabulary.jobControllerUidLabel]: uid } });
  assert.equal(created.spec.template.metadata.labels.added, 'by-admission');
  assert.equal(created.spec.template.metadata.labels[vocabulary.jobControllerUidLabel], uid);
  assert.deepEqual(validating!.spec.selector, created.spec.selector, 'validating admission sees the prepared object');
  // The client's fields are its own: nothing the server generated or admission added.
  const entry = (created.metadata!.managedFields as Array<{ fieldsV1: any }>)[0]!;
  assert.equal(entry.fieldsV1['f:spec']['f:selector'], undefined);
  assert.deepEqual(entry.fieldsV1['f:spec']['f:template']['f:metadata'], { '.': {}, 'f:labels': { '.': {}, 'f:app': {} } });
});
