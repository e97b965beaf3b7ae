// The typed client's interfaces and kind table are generated from the
// catalog (scripts/client-kinds.mjs): the file in the tree must be what the
// catalog gives today, so a kind changed in src/api/ cannot leave the
// client's types behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinAnsweredKinds, builtinKinds } from '../../../src/api/catalog.js';
import { kinds } from '../../../src/client/kinds.js';

const root = new URL('../../../../', import.meta.url);

test('src/client/kinds.ts is what scripts/client-kinds.mjs makes of the catalog', async () => {
  const generator = new URL('scripts/client-kinds.mjs', root).href;
  const { render } = await import(generator) as { render: (k: unknown[]) => string };
  const current = readFileSync(new URL('src/client/kinds.ts', root), 'utf8');
  assert.ok(current === render([...builtinKinds, ...builtinAnsweredKinds]), 'run node scripts/client-kinds.mjs after tsc');
});

test('every built-in kind has its table entry, with the catalog\'s group, version, resource and scope', () => {
  for (const k of [...builtinKinds, ...builtinAnsweredKinds]) {
    const entry = (kinds as Record<string, { group: string; version: string; resource: string; namespaced: boolean }>)[k.kind];
    assert.deepEqual(entry && [entry.group, entry.version, entry.resource, entry.namespaced], [k.group, k.version, k.plural, k.scope === 'Namespaced'], k.kind);
  }
});
