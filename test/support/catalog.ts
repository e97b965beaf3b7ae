// A registry over a memory backend, for tests that need what the server
// serves (routes, discovery, OpenAPI) without starting a server.

import { builtinKinds } from '../../src/api/catalog.js';
import type { KindDefinition } from '../../src/api/kind.js';
import { Registry } from '../../src/registry/registry.js';
import { MemoryBackend } from '../../src/storage/memory/store.js';

export function catalogRegistry(kinds: KindDefinition[] = builtinKinds): Registry {
  return new Registry(kinds, new MemoryBackend());
}
