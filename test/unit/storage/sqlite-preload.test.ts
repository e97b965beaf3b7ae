import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RangeOptions, RangeResult } from '../../../src/storage/backend.js';
import { openSqliteBackend } from '../../../src/storage/sqlite.js';
import { preloadFile, snapshotRange, storeFile, type StoreSnapshot } from '../../../src/storage/sqlite-preload.js';
import { preloadStore } from '../../../src/storage/preload.js';
import { buf } from './conformance.js';

const scratch: string[] = [];
function scratchFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'preload-test-'));
  scratch.push(dir);
  return storeFile(dir);
}
after(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store with several roots, updates, deletes, a key above U+FFFF and one in U+E000..U+FFFF (their orders differ in UTF-16). */
async function writeStore(path: string, perRoot = 30): Promise<void> {
  const store = openSqliteBackend(path);
  for (const root of ['/registry/configmaps/', '/registry/pods/', '/registry/secrets/']) {
    for (let i = 0; i < perRoot; i++) await store.create(`${root}ns/k-${String(i).padStart(4, '0')}`, buf(`${root}${i}`));
  }
  for (let i = 0; i < perRoot; i += 3) {
    const key = `/registry/pods/ns/k-${String(i).padStart(4, '0')}`;
    const kv = await store.get(key);
    await store.update(key, buf(`updated ${i}`), kv!.modRevision);
  }
  for (let i = 1; i < perRoot; i += 4) await store.delete(`/registry/secrets/ns/k-${String(i).padStart(4, '0')}`);
  await store.create('/registry/configmaps/ns/\u{1F600}', buf('astral'));
  await store.create('/registry/configmaps/ns/\uFF21', buf('fullwidth'));
  await store.close();
}

/** The reads a watch cache and others make: roots, folders, pages, start keys, with and without counting. */
function readsOf(keys: string[]): [string, RangeOptions][] {
  const reads: [string, RangeOptions][] = [];
  for (const prefix of ['', '/registry/', '/registry/configmaps/', '/registry/pods/ns/', '/registry/secrets/', '/registry/none/', '/registry/configmaps/ns/\u{1F600}']) {
    for (const limit of [0, 1, 7, 1000]) {
      for (const skipCount of [false, true]) {
        reads.push([prefix, { limit, skipCount }]);
        for (const startKey of keys.filter((k, i) => k.startsWith(prefix) && i % 5 === 2)) reads.push([prefix, { limit, skipCount, startKey }]);
      }
    }
  }
  return reads;
}

function sameAnswer(got: RangeResult, want: RangeResult, what: string): void {
  const shape = (r: RangeResult) => ({
    revision: r.revision, more: r.more, count: r.count,
    items: r.items.map((kv) => ({ key: kv.key, value: kv.value.toString(), createRevision: kv.createRevision, modRevision: kv.modRevision })),
  });
  assert.deepEqual(shape(got), shape(want), what);
}

async function fullSnapshot(path: string): Promise<StoreSnapshot> {
  const snapshot = await preloadFile(path).snapshot(60_000);
  assert.ok(snapshot, 'the preload read the store');
  assert.equal(snapshot.through, undefined, 'the preload read all of it');
  return snapshot;
}

describe('reading the store file in a worker while the server starts', () => {
  test('the snapshot answers every range read as the file does, and the store answers from it at its revision only', async () => {
    const path = scratchFile();
    await writeStore(path);
    const snapshot = await fullSnapshot(path);
    const reference = openSqliteBackend(path);
    const all = await reference.range('');
    assert.equal(snapshot.revision, all.revision);
    assert.deepEqual(snapshot.items.map((kv) => kv.key), all.items.map((kv) => kv.key));
    const reads = readsOf(all.items.map((kv) => kv.key));
    const expected = await Promise.all(reads.map(([prefix, options]) => reference.range(prefix, options)));
    await reference.close();

    reads.forEach(([prefix, options], i) => sameAnswer(snapshotRange(snapshot, prefix, options)!, expected[i]!, `${prefix} ${JSON.stringify(options)}`));

    // Each value is its own allocation (storage/bytes.ts), handed over from the worker.
    for (const kv of snapshot.items) assert.equal(kv.value.byteLength, kv.value.buffer.byteLength);

    const store = openSqliteBackend(path, undefined, snapshot);
    try {
      for (const [i, [prefix, options]] of reads.entries()) sameAnswer(await store.range(prefix, options), expected[i]!, `store: ${prefix} ${JSON.stringify(options)}`);
      // A write: reads at the new revision see it, reads at the snapshot's do not.
      await store.create('/registry/configmaps/ns/new', buf('new'));
      const now = await store.range('/registry/configmaps/');
      assert.ok(now.items.some((kv) => kv.key === '/registry/configmaps/ns/new'));
      const then = await store.range('/registry/configmaps/', { revision: snapshot.revision });
      assert.ok(!then.items.some((kv) => kv.key === '/registry/configmaps/ns/new'));
      sameAnswer(then, expected[reads.findIndex(([p, o]) => p === '/registry/configmaps/' && !o.limit && !o.skipCount && !o.startKey)]!, 'old revision');
    } finally {
      await store.close();
    }
  });

  test('a partial snapshot answers only what it holds; everything else is read from the file at its revision', async () => {
    const path = scratchFile();
    await writeStore(path);
    const snapshot = await fullSnapshot(path);
    const reference = openSqliteBackend(path);
    const keys = (await reference.range('')).items.map((kv) => kv.key);
    const reads = readsOf(keys);
    const expected = await Promise.all(reads.map(([prefix, options]) => reference.range(prefix, options)));
    await reference.close();
    for (const cut of [1, 20, 45, keys.length - 1]) {
      const partial: StoreSnapshot = { ...snapshot, items: snapshot.items.slice(0, cut), through: keys[cut - 1] };
      let answered = 0;
      reads.forEach(([prefix, options], i) => {
        const got = snapshotRange(partial, prefix, options);
        if (got) {
          answered++;
          sameAnswer(got, expected[i]!, `cut ${cut}: ${prefix} ${JSON.stringify(options)}`);
        }
      });
      if (cut >= 20) assert.ok(answered > 0, `cut ${cut}: some reads answered from memory`);
      const store = openSqliteBackend(path, undefined, partial);
      try {
        for (const [i, [prefix, options]] of reads.entries()) sameAnswer(await store.range(prefix, options), expected[i]!, `store, cut ${cut}: ${prefix} ${JSON.stringify(options)}`);
      } finally {
        await store.close();
      }
    }
  });

  test('a snapshot of another revision is not used; the worker has released the file when the snapshot comes', async () => {
    const path = scratchFile();
    await writeStore(path, 5);
    const snapshot = await fullSnapshot(path);
    // Opened at once after: the worker's connection is closed (the store's exclusive lock is taken at open).
    const store = openSqliteBackend(path, undefined, snapshot);
    await store.create('/registry/configmaps/ns/later', buf('later'));
    await store.close();
    const stale = openSqliteBackend(path, undefined, snapshot);
    try {
      const listed = await stale.range('/registry/configmaps/');
      assert.ok(listed.items.some((kv) => kv.key === '/registry/configmaps/ns/later'), 'read from the file, not the older snapshot');
      assert.equal(listed.revision, snapshot.revision + 1);
    } finally {
      await stale.close();
    }
  });

  test('asked for the file at once, the worker stops after a page and what it read is a valid partial snapshot', async () => {
    const path = scratchFile();
    await writeStore(path, 1500);
    const snapshot = await preloadFile(path).snapshot(0);
    const store = openSqliteBackend(path, undefined, snapshot);
    try {
      // Whatever the worker got to, the store answers as the file does.
      const all = await store.range('/registry/');
      assert.equal(all.items.length, 3 * 1500 - Math.ceil(1500 / 4) + 2);
      const page = await store.range('/registry/pods/', { limit: 1000, skipCount: true });
      assert.equal(page.items.length, 1000);
      assert.ok(page.more);
      if (snapshot) assert.ok(snapshot.items.length > 0 && snapshot.items.length <= all.items.length);
    } finally {
      await store.close();
    }
  });

  test('no store file yet: no snapshot, and the file is not created; other stores are not read ahead', async () => {
    const path = scratchFile();
    assert.equal(await preloadFile(path).snapshot(60_000), undefined);
    assert.equal(existsSync(path), false);
    assert.equal(preloadStore('memory', path), undefined);
    assert.equal(preloadStore('etcd3', path), undefined);
  });
});
