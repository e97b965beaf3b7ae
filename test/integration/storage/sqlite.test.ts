import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteBackend } from '../../../src/storage/sqlite/store.js';
import { availableDrivers, chooseDriver, defaultLoaders, driverVariable, openDatabase, selectDriver, type DriverLoaders } from '../../../src/storage/sqlite/driver.js';
import { buf, recordWatch, runConformance, text } from '../../support/storage-conformance.js';

const scratch: string[] = [];
function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-test-'));
  scratch.push(dir);
  return dir;
}
function removeScratch(): void {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// Every binding this Node can load passes the same suite (Node 20 has only the addon).
for (const driver of availableDrivers()) {
  runConformance(`sqlite (${driver})`, {
    open: () => openSqliteBackend(join(scratchDir(), 'store.db'), driver),
    cleanup: removeScratch,
  });
}

describe('sqlite backend on disk', () => {
  test('data, revisions and compaction survive close and reopen', async () => {
    const path = join(scratchDir(), 'nested', 'folder', 'store.db');
    const first = openSqliteBackend(path);
    await first.create('/a', buf('1'));              // 1
    await first.create('/b', buf('1'));              // 2
    await first.update('/a', buf('2'), 1);           // 3
    await first.delete('/b');                        // 4
    await first.create('/c', buf('1'));              // 5
    await first.compact(3);
    await first.close();

    const second = openSqliteBackend(path);
    try {
      assert.equal(await second.currentRevision(), 5);
      assert.equal(await second.compactedRevision(), 3);
      assert.deepEqual((await second.range('/')).items.map((kv) => [kv.key, text(kv), kv.modRevision]), [['/a', '2', 3], ['/c', '1', 5]]);
      assert.equal(text(await second.get('/b', 3)), '1');
      const next = await second.create('/d', buf('1'));
      assert.equal(next.modRevision, 6, 'revisions continue where they were');
      // After a restart the events come from the table, not from memory.
      const watcher = recordWatch(second, '/', { afterRevision: 3, prevKv: true });
      await watcher.waitFor(3);
      assert.deepEqual(watcher.events.map((e) => [e.type, e.revision, e.kv.key, text(e.kv), text(e.prevKv), e.prevKv?.modRevision]), [
        ['delete', 4, '/b', '1', '1', 2],
        ['put', 5, '/c', '1', undefined, undefined],
        ['put', 6, '/d', '1', undefined, undefined],
      ]);
      assert.equal(watcher.events[0]!.kv.createRevision, 2);
      watcher.cancel();
    } finally {
      await second.close();
      removeScratch();
    }
  });

  test('the revision survives even when compaction removed the newest rows', async () => {
    const path = join(scratchDir(), 'store.db');
    const first = openSqliteBackend(path);
    await first.create('/a', buf('1'));
    await first.delete('/a');
    await first.compact(2);
    await first.close();
    const second = openSqliteBackend(path);
    assert.equal(await second.currentRevision(), 2);
    assert.equal((await second.create('/b', buf('1'))).modRevision, 3);
    await second.close();
    removeScratch();
  });

  test('compaction deletes superseded rows and tombstones from the file', async () => {
    const path = join(scratchDir(), 'store.db');
    const store = openSqliteBackend(path);
    let kv = await store.create('/a', buf('0'));
    for (let i = 1; i <= 10; i++) kv = await store.update('/a', buf(String(i)), kv.modRevision);
    await store.create('/b', buf('b'));
    await store.delete('/b');
    await store.create('/c', buf('c'));                // 14
    await store.compact(await store.currentRevision());
    await store.close();
    const db = openDatabase(path);
    const rows = db.prepare('SELECT name, id FROM kv ORDER BY id').all().map((row) => ({ ...(row as object) }));
    db.close();
    assert.deepEqual(rows, [{ name: '/a', id: 11 }, { name: '/c', id: 14 }]);
    removeScratch();
  });

  test('a watcher far behind reads history beyond what is kept in memory', async () => {
    const store = openSqliteBackend(join(scratchDir(), 'store.db'));
    const total = 12_500;
    const writes = [];
    for (let i = 0; i < total; i++) writes.push(store.create(`/many/${i}`, buf(String(i))));
    await Promise.all(writes);
    const watcher = recordWatch(store, '/many/', { afterRevision: 0 });
    await watcher.waitFor(total, 20_000);
    assert.deepEqual(watcher.events.map((e) => e.revision), Array.from({ length: total }, (_, i) => i + 1));
    assert.ok(Math.max(...watcher.batches) <= 1000, 'replay comes in bounded batches');
    watcher.cancel();
    await store.close();
    removeScratch();
  });

  test('large values: the events kept in memory stay within their byte bound, and watchers live and late see every one with its previous value', async () => {
    const bound = 64 * 1024;
    const store = openSqliteBackend(join(scratchDir(), 'store.db'), undefined, { watchHubBytes: bound });
    const live = recordWatch(store, '/big/', { afterRevision: 0, prevKv: true });
    const value = (i: number) => Buffer.alloc(16 * 1024, String(i % 10));
    let last = await store.create('/big/a', value(0));
    const total = 40;
    let most = 0;
    for (let i = 1; i < total; i++) {
      last = await store.update('/big/a', value(i), last.modRevision);
      most = Math.max(most, store.watchMemory.bytes);
    }
    assert.ok(most <= bound, `held ${most} bytes, bound ${bound}`);
    assert.equal(store.watchMemory.limitBytes, bound);
    assert.ok(store.watchMemory.events < 4, `${store.watchMemory.events} events held, each of 32 KiB`);
    const late = recordWatch(store, '/big/', { afterRevision: 0, prevKv: true });
    for (const watcher of [live, late]) {
      await watcher.waitFor(total);
      assert.deepEqual(watcher.events.map((e) => e.revision), Array.from({ length: total }, (_, i) => i + 1));
      watcher.events.forEach((e, i) => {
        assert.ok(e.kv.value.equals(value(i)), `the value of revision ${i + 1}`);
        if (i > 0) assert.ok(e.prevKv?.value.equals(value(i - 1)), `the previous value of revision ${i + 1}`);
      });
      watcher.cancel();
    }
    await store.close();
    removeScratch();
  });

  test('readers and watchers see a write only once its caller has its answer', async () => {
    const store = openSqliteBackend(join(scratchDir(), 'store.db'));
    const rev0 = await store.currentRevision();
    const watcher = recordWatch(store, '/d/', { afterRevision: rev0 });
    let answered = 0;
    let writing = true;
    const seenEarly: string[] = [];
    // Between two turns of the event loop, nothing may be visible that was not answered.
    const poller = (async () => {
      while (writing) {
        const rev = await store.currentRevision();
        const { items } = await store.range('/d/');
        if (rev - rev0 > answered) seenEarly.push(`revision ${rev} with ${answered} writes answered`);
        if (items.length > answered) seenEarly.push(`${items.length} keys listed with ${answered} writes answered`);
        if (watcher.events.length > answered) seenEarly.push(`${watcher.events.length} events with ${answered} writes answered`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all(Array.from({ length: 16 }, async (_, c) => {
      for (let i = 0; i < 40; i++) {
        await store.create(`/d/${c}-${i}`, buf('x'));
        answered++;
      }
    }));
    writing = false;
    await poller;
    assert.deepEqual(seenEarly, []);
    await watcher.waitFor(640);
    assert.equal(await store.currentRevision(), rev0 + 640);
    watcher.cancel();
    await store.close();
    removeScratch();
  });

  test('a read of a key being written returns the write together with its answer', async () => {
    const store = openSqliteBackend(join(scratchDir(), 'store.db'));
    const first = await store.create('/k', buf('1'));
    for (let round = 2; round < 50; round++) {
      let answered = false;
      const current = await store.get('/k');
      const writing = store.update('/k', buf(String(round)), current!.modRevision).then(() => { answered = true; });
      // The write is committed by now; it may still be on its way to the disk.
      await new Promise((resolve) => setImmediate(resolve));
      const read = await store.get('/k');
      assert.equal(text(read), String(round));
      assert.equal(answered, true, 'the reader saw a write whose caller had no answer yet');
      assert.equal(read!.createRevision, first.modRevision);
      await writing;
    }
    await store.close();
    removeScratch();
  });

  test('close writes what was asked before it, and refuses what comes after', async () => {
    const path = join(scratchDir(), 'store.db');
    const store = openSqliteBackend(path);
    await store.create('/c/first', buf('x'));
    const asked = Array.from({ length: 100 }, (_, i) => store.create(`/c/${i}`, buf('x')));
    const closing = store.close();
    await assert.rejects(store.create('/c/late', buf('x')), /closed/);
    await closing;
    const outcomes = await Promise.allSettled(asked);
    assert.deepEqual(outcomes.filter((o) => o.status === 'rejected'), []);
    const reopened = openSqliteBackend(path);
    assert.equal((await reopened.range('/c/')).items.length, 101);
    await reopened.close();
    removeScratch();
  });

  for (const driver of availableDrivers()) {
    test(`a second store on the same file is refused while the first is open (${driver})`, async () => {
      const path = join(scratchDir(), 'store.db');
      const first = openSqliteBackend(path, driver);
      assert.throws(() => openSqliteBackend(path, driver), /is locked: another process has the store open/);
      await first.close();
      await openSqliteBackend(path, driver).close();
      removeScratch();
    });
  }

  // How long the open takes is measured by bench/storage.ts, never asserted here.
  test('a file with 10,000 keys reopens with its revision and every key', async () => {
    const path = join(scratchDir(), 'store.db');
    const store = openSqliteBackend(path);
    const writes = [];
    for (let i = 0; i < 10_000; i++) writes.push(store.create(`/registry/things/ns/item-${i}`, buf(JSON.stringify({ i, pad: 'x'.repeat(200) }))));
    await Promise.all(writes);
    await store.close();
    const reopened = openSqliteBackend(path);
    try {
      assert.equal(await reopened.currentRevision(), 10_000);
      const all = await reopened.range('/registry/things/');
      assert.equal(all.items.length, 10_000);
      assert.equal(JSON.parse(text(await reopened.get('/registry/things/ns/item-9999'))!).i, 9999);
    } finally {
      await reopened.close();
      removeScratch();
    }
  });

  test('a long read (the file mapped while it runs) answers what short reads answer, and leaves the file unmapped', async () => {
    const path = join(scratchDir(), 'store.db');
    const store = openSqliteBackend(path);
    try {
      const writes = [];
      for (let i = 0; i < 3_000; i++) writes.push(store.create(`/registry/things/ns/item-${String(i).padStart(4, '0')}`, buf(JSON.stringify({ i, pad: 'y'.repeat(2_000) }))));
      const [first] = await Promise.all(writes);
      // Rows changed and deleted since, some still only in the WAL.
      await store.update('/registry/things/ns/item-0000', buf('{"i":"changed"}'), first!.modRevision);
      await store.delete('/registry/things/ns/item-0001');
      const long = await store.range('/registry/things/');
      const short: string[] = [];
      for (let after = ''; ;) {
        const page = await store.range('/registry/things/', { limit: 100, ...(after ? { startKey: after } : {}) });
        short.push(...page.items.map((kv) => `${kv.key}@${kv.modRevision}=${text(kv)}`));
        if (!page.more) break;
        after = `${page.items[page.items.length - 1]!.key}\0`;
      }
      assert.equal(long.items.length, 2_999);
      assert.deepEqual(long.items.map((kv) => `${kv.key}@${kv.modRevision}=${text(kv)}`), short);
      assert.equal(text(long.items[0]), '{"i":"changed"}');
      // Mapped pages would count as resident memory beside the cache's copy of every value.
      assert.ok(!readFileSync('/proc/self/maps', 'utf8').includes(path), 'the store file is still mapped after the read');
    } finally {
      await store.close();
      removeScratch();
    }
  });

  test('every acknowledged write survives kill -9 of the writer', async () => {
    const path = join(scratchDir(), 'store.db');
    const child = spawn(process.execPath, [fileURLToPath(new URL('./kill-writer.js', import.meta.url)), path, '100000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acknowledged: string[] = [];
    let partial = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      acknowledged.push(...lines.filter((line) => line.length > 0));
      // Kill mid-stream, while writes are in flight.
      if (acknowledged.length >= 2000 && !child.killed) child.kill('SIGKILL');
    });
    const signal = await exited;
    assert.equal(signal, 'SIGKILL', 'the writer must die by the signal, not finish');
    assert.ok(acknowledged.length >= 2000);
    const store = openSqliteBackend(path);
    try {
      const stored = new Set((await store.range('/kill/')).items.map((kv) => kv.key));
      const missing = acknowledged.filter((key) => !stored.has(key));
      assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged writes lost`);
      assert.ok(await store.currentRevision() >= acknowledged.length);
    } finally {
      await store.close();
      removeScratch();
    }
  });
});

test('the addon serves unless PLAT_SQLITE_DRIVER asks for node:sqlite, which is refused where this Node has none', () => {
  const addonLoads = availableDrivers().includes('better-sqlite3');
  assert.equal(chooseDriver({}), addonLoads ? 'better-sqlite3' : 'node:sqlite');
  assert.equal(chooseDriver({ [driverVariable]: 'better-sqlite3' }), 'better-sqlite3');
  assert.throws(() => chooseDriver({ [driverVariable]: 'sqlite3' }), /must be better-sqlite3 or node:sqlite, not "sqlite3"/);
  if (availableDrivers().includes('node:sqlite')) assert.equal(chooseDriver({ [driverVariable]: 'node:sqlite' }), 'node:sqlite');
  else assert.throws(() => chooseDriver({ [driverVariable]: 'node:sqlite' }), /needs Node 22\.13 or later/);
});

test('where the addon cannot be loaded, node:sqlite serves and says so in one line; with neither, the error names the fixes', () => {
  const noAddon: DriverLoaders = { ...defaultLoaders, addon: () => { throw new Error("Cannot find module 'better-sqlite3'\nRequire stack: ..."); } };
  const neither: DriverLoaders = { ...noAddon, builtin: () => { throw new Error('No such built-in module: node:sqlite'); } };
  assert.deepEqual(availableDrivers(neither), []);
  assert.throws(() => selectDriver({}, neither), (err: Error) =>
    /the SQLite store needs the better-sqlite3 addon, which could not be loaded \(Cannot find module 'better-sqlite3'\), or Node's built-in node:sqlite/.test(err.message)
    && /npm install better-sqlite3/.test(err.message) && /Node 22\.13 or later/.test(err.message) && /--storage-backend/.test(err.message));
  // Asked for by name, the addon is used as asked (its own error, if any, comes when the store opens).
  assert.deepEqual(selectDriver({ [driverVariable]: 'better-sqlite3' }, neither), { driver: 'better-sqlite3' });
  if (availableDrivers().includes('node:sqlite')) {
    const chosen = selectDriver({}, noAddon);
    assert.equal(chosen.driver, 'node:sqlite');
    assert.equal(chosen.notice, "SQLite through Node's built-in node:sqlite: the better-sqlite3 addon could not be loaded (Cannot find module 'better-sqlite3')");
  } else {
    assert.throws(() => selectDriver({}, noAddon), /which Node v\d+\.\d+\.\d+ does not have/);
  }
  // This machine's own install: the addon where it loads (on a Node line it was not built for, node:sqlite with the notice).
  assert.equal(selectDriver({}).driver, availableDrivers().includes('better-sqlite3') ? 'better-sqlite3' : 'node:sqlite');
});
