// The official Python client (Debian's python3-kubernetes) against a server
// on a real SQLite file: CRUD, paging, a watch sent as watch=True, a forced
// server-side apply (force=True). The script says which step failed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTestServer } from '../support/server.js';
import { widgetCrd } from '../support/crds.js';

const script = new URL('../../../test/e2e/python/client_check.py', import.meta.url).pathname;
const customScript = new URL('../../../test/e2e/python/custom_check.py', import.meta.url).pathname;
/** Debian's package installs for the system interpreter, whatever python3 comes first on the PATH. */
const python = '/usr/bin/python3';

test('the official Python client works: CRUD, paging, watch=True, forced apply', async () => {
  const s = await startTestServer({ storageBackend: 'sqlite' });
  try {
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(python, [script, s.kubeconfigPath, 'py-client'], { timeout: 120_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) || 1 : 0, out: stdout + stderr });
      });
    });
    assert.equal(result.code, 0, result.out);
    assert.match(result.out, /crud ok\npaging ok\nwatch ok\nforced apply ok\ndelete ok/);
  } finally {
    await s.close();
  }
});

test('the Python client: a definition created typed, its kind used through the dynamic client', async () => {
  const s = await startTestServer({ storageBackend: 'sqlite' });
  try {
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(python, [customScript, s.kubeconfigPath, JSON.stringify(widgetCrd())], { timeout: 120_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) || 1 : 0, out: stdout + stderr });
      });
    });
    assert.equal(result.code, 0, result.out);
    assert.match(result.out, /definition established\ndynamic client ok\ndefinition deleted/);
  } finally {
    await s.close();
  }
});
