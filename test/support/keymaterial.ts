// Key material made once and copied into each test server's data folder.
// A server generates an RSA-2048 key and three certificates on its first
// start in a folder (150 ms and more on a loaded machine), and the suite
// starts well over a hundred; a restart re-reads the files instead, so a
// folder that already holds them starts as a restarted server does. The
// generating start itself stays proven: startChildServer and startTestServer
// take `keyMaterial: 'generate'`, and test/integration/restart.test.ts uses it.
//
// One run (scripts/run-tests.mjs) makes the fixture once and names its folder
// in PLAT_TEST_KEY_MATERIAL; a test file run on its own makes one for itself.

import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKeyMaterial, keyMaterialPaths } from '../../src/pki/index.js';

/** Names the folder (a data dir with a `pki/`) that run-tests.mjs made for the whole run. */
export const keyMaterialVariable = 'PLAT_TEST_KEY_MATERIAL';

let made: Promise<string> | undefined;

/** The `pki/` folder to copy: the run's, or one made now for this process. */
function fixturePkiDir(): Promise<string> {
  made ??= (async () => {
    const shared = process.env[keyMaterialVariable];
    if (shared && existsSync(keyMaterialPaths(shared).caCert)) return keyMaterialPaths(shared).dir;
    const dataDir = mkdtempSync(join(tmpdir(), 'plat-test-pki-'));
    process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
    await ensureKeyMaterial(dataDir, { serviceAccountKeyFiles: [] });
    return keyMaterialPaths(dataDir).dir;
  })();
  return made;
}

/**
 * Copies the fixture's key material into `dataDir` unless it has a `pki/`
 * already (a restart, or a test's own files), keeping each file's mode
 * (keys 0600) and the folder's 0700 as the server would write them.
 */
export async function seedKeyMaterial(dataDir: string): Promise<void> {
  const target = keyMaterialPaths(dataDir).dir;
  if (existsSync(target)) return;
  const source = await fixturePkiDir();
  mkdirSync(target, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(source)) {
    copyFileSync(join(source, name), join(target, name));
    chmodSync(join(target, name), statSync(join(source, name)).mode & 0o777);
  }
}
