// What admission reserved for an update (quota) is given back when the write
// does not land: an update that loses its compare-and-swap is admitted again
// on the fresh object, so the first admission's reservation goes back; a
// dry run, which stores nothing but was never charged either, gives nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineKind } from '../../../src/api/kind.js';
import { define, t } from '../../../src/api/schema.js';
import { kindSchema } from '../../../src/api/core/v1/common.js';
import { ResourceStore } from '../../../src/registry/store.js';
import type { RequestScope, WriteOptions } from '../../../src/registry/writeoptions.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import type { Admission } from '../../../src/admission/types.js';

const gadgets = defineKind({
  group: 'test.example', version: 'v1', kind: 'Gadget', plural: 'gadgets', scope: 'Cluster',
  schema: define('test.example.v1.Gadget', kindSchema('A test kind.', { spec: t.object({ size: t.int32('How big.') }) })),
});

const opts = (dryRun = false): WriteOptions => ({ dryRun, fieldValidation: 'Strict' });
const scope = (): RequestScope => ({ warnings: [] });

test('an update that loses its race gives back what its first admission reserved, once; a dry run gives nothing', async () => {
  const backend = new MemoryBackend();
  const log: string[] = [];
  let interfere = false;
  const admission: Admission = {
    mutate: async () => {},
    validate: async (r) => {
      log.push(`validate ${r.operation} size=${r.object?.spec?.size}`);
      if (!interfere) return;
      interfere = false;
      // Another writer gets in between this admission and the write.
      const key = store.key(undefined, 'g');
      const stored = (await backend.get(key))!;
      await backend.update(key, Buffer.from(stored.value), stored.modRevision);
    },
    abandon: async (r) => { log.push(`abandon ${r.operation} size=${r.object?.spec?.size}`); },
  };
  const store = new ResourceStore(gadgets, backend, admission);
  await store.create(undefined, { value: { metadata: { name: 'g' }, spec: { size: 1 } } }, opts(), scope());
  log.length = 0;
  interfere = true;
  const updated = await store.update(undefined, 'g', { value: { metadata: { name: 'g' }, spec: { size: 2 } } }, opts(), scope());
  assert.deepEqual(updated.object.spec, { size: 2 });
  assert.deepEqual(log, ['validate UPDATE size=2', 'abandon UPDATE size=2', 'validate UPDATE size=2']);
  log.length = 0;
  await store.update(undefined, 'g', { value: { metadata: { name: 'g' }, spec: { size: 3 } } }, opts(true), scope());
  assert.deepEqual(log, ['validate UPDATE size=3']);
});
