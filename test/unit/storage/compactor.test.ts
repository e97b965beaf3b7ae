import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBackend, startCompactor } from '../../../src/storage/index.js';
import { buf } from '../../support/storage-conformance.js';
import { FakeClock } from '../../support/clock.js';

test('the compactor keeps exactly the retention window of history, and a stopped one compacts no more', async () => {
  const retentionMs = 400;
  const intervalMs = 20;
  const clock = new FakeClock();
  const backend = openBackend({ kind: 'memory', dataDir: '/nonexistent' });
  for (const key of ['/a', '/b', '/c']) await backend.create(key, buf('x'));
  const compactor = startCompactor(backend, retentionMs, { intervalMs, clock, onError: (err) => assert.fail(String(err)) });
  // Samples at +0, +20, ...: revision 3 until /d is written just after the one at +160; the sample at +180 is the first with 4.
  const compactedAt = new Map<number, number>();
  for (let elapsed = 0; elapsed <= 700; elapsed += intervalMs) {
    await compactor.settled();
    compactedAt.set(elapsed, await backend.compactedRevision());
    if (elapsed === 160) await backend.create('/d', buf('x'));
    clock.advance(intervalMs);
  }
  compactor.stop();
  for (const [elapsed, compacted] of compactedAt) {
    // The newest sample at least the retention old names the revision current back then.
    const expected = elapsed < retentionMs ? 0 : elapsed < 180 + retentionMs ? 3 : 4;
    assert.equal(compacted, expected, `compacted revision at +${elapsed} ms`);
  }
  await backend.create('/e', buf('x'));
  clock.advance(10 * retentionMs);
  await compactor.settled();
  assert.equal(await backend.compactedRevision(), 4, 'a stopped compactor compacts no more');
  assert.deepEqual(clock.pending(), [], 'and leaves no timer behind');
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
