import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBackend, startCompactor } from '../../../src/storage/index.js';
import { buf, settle } from './conformance.js';

test('the compactor keeps exactly the retention window of history', async () => {
  const retentionMs = 400;
  const backend = openBackend({ kind: 'memory', dataDir: '/nonexistent' });
  // When each revision became current, to check what the compactor may drop.
  const becameCurrent: { at: number; revision: number }[] = [{ at: performance.now(), revision: 0 }];
  const write = async (key: string) => {
    const kv = await backend.create(key, buf('x'));
    becameCurrent.push({ at: performance.now(), revision: kv.modRevision });
  };
  for (const key of ['/a', '/b', '/c']) await write(key);
  const compactor = startCompactor(backend, retentionMs, { intervalMs: 20, onError: (err) => assert.fail(String(err)) });
  const observations: { at: number; compacted: number }[] = [];
  const deadline = performance.now() + 5000;
  let wroteLate = false;
  while (performance.now() < deadline) {
    observations.push({ at: performance.now(), compacted: await backend.compactedRevision() });
    if (!wroteLate && performance.now() - becameCurrent[3]!.at > 150) {
      await write('/d');
      wroteLate = true;
    }
    if (observations.at(-1)!.compacted === 4) break;
    await settle(10);
  }
  compactor.stop();
  assert.equal(observations.at(-1)!.compacted, 4, 'history older than the window is compacted');
  for (const { at, compacted } of observations) {
    // The newest revision current at (at - retention) bounds what may be gone.
    const allowed = becameCurrent.filter((c) => c.at <= at - retentionMs + 5).at(-1)?.revision ?? 0;
    assert.ok(compacted <= allowed, `compacted ${compacted} at +${(at - becameCurrent[0]!.at).toFixed(0)} ms, only ${allowed} allowed`);
  }
  assert.ok(observations.some((o) => o.compacted === 3), 'the first window ended at revision 3');
  await write('/e');
  await settle(retentionMs + 100);
  assert.equal(await backend.compactedRevision(), 4, 'a stopped compactor compacts no more');
  await backend.close();
});

test('openBackend opens the sqlite store in the data folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'open-backend-'));
  try {
    const backend = openBackend({ kind: 'sqlite', dataDir: join(dir, 'data') });
    assert.equal(backend.name, 'sqlite');
    await backend.create('/a', buf('1'));
    await backend.close();
    assert.ok(existsSync(join(dir, 'data', 'store.db')));
    const again = openBackend({ kind: 'sqlite', dataDir: join(dir, 'data') });
    assert.equal(await again.currentRevision(), 1);
    await again.close();
    assert.equal(openBackend({ kind: 'memory', dataDir: dir }).name, 'memory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
