// Shared helpers for the PKI tests: temporary folders that clean themselves up.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/** A fresh folder under the OS temp dir, removed when the test file ends. */
export async function tempDir(prefix = 'pki-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
