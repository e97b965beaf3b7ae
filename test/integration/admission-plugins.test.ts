// The plugin flags as a user meets them over HTTPS: AlwaysDeny refuses every
// write but no read, NamespaceLifecycle can be turned off, NamespaceExists
// and NamespaceAutoProvision can be turned on, and an unknown plugin name
// stops the start-up (in-process and from the command line) with one line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startTestServer, tempDir, cliPath } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { AdmissionConfigError } from '../../src/admission/index.js';

const cm = (name: string) => ({ metadata: { name }, data: { a: 'b' } });

test('--enable-admission-plugins=AlwaysDeny refuses every write with 403, reads go on; the server serves but is not ready', async () => {
  const s = await startTestServer({ enableAdmissionPlugins: ['AlwaysDeny'] });
  try {
    const created = await s.client.post('/api/v1/namespaces', { metadata: { name: 'denied' } });
    assertStatus(created, 403, 'Forbidden');
    assert.equal(created.json.message, 'namespaces "denied" is forbidden: admission control is denying all modifications');
    assert.deepEqual(created.json.details, { name: 'denied', kind: 'namespaces' });
    const dryRun = await s.client.post('/api/v1/namespaces?dryRun=All', { metadata: { name: 'denied' } });
    assertStatus(dryRun, 403, 'Forbidden');
    assert.equal((await s.client.get('/api/v1/namespaces')).status, 200);
    // Even the server's own reserved namespaces are refused: it says so in /readyz.
    assert.equal((await s.client.get('/api/v1/namespaces/default')).status, 404);
    const ready = await s.client.get('/readyz?verbose');
    assert.equal(ready.status, 500);
    assert.match(ready.text, /\[-\]poststarthook\/reserved-namespaces failed/);
  } finally {
    await s.close();
  }
});

test('--disable-admission-plugins=NamespaceLifecycle lets a write into a missing namespace through; NamespaceExists refuses it', async () => {
  const open = await startTestServer({ disableAdmissionPlugins: ['NamespaceLifecycle'] });
  try {
    const r = await open.client.post('/api/v1/namespaces/nowhere/configmaps', cm('stray'));
    assert.equal(r.status, 201, r.text);
    assert.equal((await open.client.get('/api/v1/namespaces/nowhere')).status, 404, 'no namespace was made');
  } finally {
    await open.close();
  }
  const strict = await startTestServer({ disableAdmissionPlugins: ['NamespaceLifecycle'], enableAdmissionPlugins: ['NamespaceExists'] });
  try {
    const r = await strict.client.post('/api/v1/namespaces/nowhere/configmaps', cm('stray'));
    assertStatus(r, 404, 'NotFound');
    assert.equal(r.json.message, 'namespaces "nowhere" not found');
  } finally {
    await strict.close();
  }
});

test('--enable-admission-plugins=NamespaceAutoProvision creates the namespace of a create, but not in a dry run', async () => {
  const s = await startTestServer({ enableAdmissionPlugins: ['NamespaceAutoProvision'] });
  try {
    const dry = await s.client.post('/api/v1/namespaces/tried/configmaps?dryRun=All', cm('x'));
    assertStatus(dry, 404, 'NotFound');
    assert.equal((await s.client.get('/api/v1/namespaces/tried')).status, 404);
    const r = await s.client.post('/api/v1/namespaces/fresh/configmaps', cm('x'));
    assert.equal(r.status, 201, r.text);
    const ns = await s.client.get('/api/v1/namespaces/fresh');
    assert.equal(ns.status, 200);
    assert.equal(ns.json.status.phase, 'Active');
  } finally {
    await s.close();
  }
});

test('an unknown plugin name stops the start-up with a clear message', async () => {
  await assert.rejects(startTestServer({ enableAdmissionPlugins: ['Bogus'] }), (e: Error) => {
    assert.ok(e instanceof AdmissionConfigError);
    assert.equal(e.message, 'enable-admission-plugins plugin "Bogus" is unknown');
    return true;
  });
  const dir = tempDir();
  try {
    const r = spawnSync(process.execPath, [cliPath, '--secure-port', '0', '--data-dir', dir, '--disable-admission-plugins=Nope', '--enable-admission-plugins', 'AlwaysDeny', '--disable-admission-plugins', 'AlwaysDeny'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'plat-apiserver: disable-admission-plugins plugin "Nope" is unknown; [AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
