// The per-request object lookup of the token checks: from the started watch
// cache at once (no promise), from the store while the cache is not there or
// does not hold the object.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openBackend } from '../../../src/storage/index.js';
import { CacheSet } from '../../../src/storage/cache/index.js';
import { Registry } from '../../../src/registry/registry.js';
import { ObjectLookup } from '../../../src/registry/lookup.js';
import { builtinKinds } from '../../../src/api/catalog.js';
import { tempDir } from '../../support/server.js';

test('find answers from the started watch cache without a promise, and from the store otherwise', async () => {
  const backend = openBackend({ kind: 'memory', dataDir: tempDir() });
  const caches = new CacheSet(backend);
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  const lookup = new ObjectLookup(registry, caches);
  try {
    const created = await registry.store('', 'v1', 'serviceaccounts')!.create('ns', { value: { metadata: { name: 'robot' } } }, { dryRun: false, fieldValidation: 'Strict' }, { warnings: [] });
    const root = registry.store('', 'v1', 'serviceaccounts')!.reader.keyRoot;
    assert.equal(caches.startedCache(root), undefined, 'no cache before anyone asked for one');
    const fromStore = lookup.find('', 'v1', 'serviceaccounts', 'ns', 'robot');
    assert.ok(fromStore instanceof Promise, 'without a started cache the store is read');
    assert.equal((await fromStore)?.metadata?.uid, created.metadata?.uid);
    await caches.cacheFor(root);
    const atOnce = lookup.find('', 'v1', 'serviceaccounts', 'ns', 'robot');
    assert.ok(!(atOnce instanceof Promise), 'the started cache answers at once');
    assert.equal(atOnce?.metadata?.uid, created.metadata?.uid);
    const missing = lookup.find('', 'v1', 'serviceaccounts', 'ns', 'nobody');
    assert.ok(missing instanceof Promise, 'a miss goes to the store');
    assert.equal(await missing, undefined);
    assert.equal(lookup.find('', 'v1', 'nonsense', 'ns', 'robot'), undefined, 'a resource not served');
    await caches.stopAll();
    assert.equal(caches.startedCache(root), undefined, 'stopped caches are not handed out');
  } finally {
    await caches.stopAll();
    await backend.close();
  }
});
