// Start and stop as probes see them: within --livez-grace-period unfinished
// post-start work does not fail /livez (it still fails /readyz); once
// shutdown begins /readyz fails its `shutdown` check while /livez stays
// good, and with --shutdown-send-retry-after other requests get 429 with
// Retry-After and Connection: close.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startChildServer, startTestServer, tempDir } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

test('--livez-grace-period excuses unfinished post-start work on /livez only', async () => {
  // AlwaysDeny refuses the reserved namespaces: that post-start work never finishes.
  for (const [grace, live] of [[3_600_000, 200], [0, 500]] as const) {
    const s = await startTestServer({ enableAdmissionPlugins: ['AlwaysDeny'], livezGracePeriodMs: grace });
    try {
      const livez = await s.client.get('/livez?verbose');
      assert.equal(livez.status, live, livez.text);
      const readyz = await s.client.get('/readyz?verbose');
      assert.equal(readyz.status, 500);
      assert.match(readyz.text, /\[-\]poststarthook\/reserved-namespaces failed/);
    } finally {
      await s.close();
    }
  }
});

test('during the shutdown delay: readyz fails, livez holds, other requests get 429 and Connection: close', async () => {
  const s = await startTestServer({ shutdownDelayDurationMs: 1500, shutdownSendRetryAfter: true });
  try {
    assert.equal((await s.client.get('/readyz')).status, 200);
    const stopping = s.shutdown();
    const readyz = await s.client.get('/readyz?verbose');
    assert.equal(readyz.status, 500);
    assert.match(readyz.text, /\[-\]shutdown failed: reason withheld/);
    assert.equal((await s.client.get('/livez')).status, 200);
    const r = await s.client.get('/api/v1/namespaces');
    assert.equal(r.status, 429, r.text);
    assert.equal(r.headers['retry-after'], '5');
    assert.equal(r.headers.connection, 'close');
    assert.equal(r.json.reason, 'TooManyRequests');
    assert.equal(r.json.message, 'The apiserver is shutting down, please try again later.');
    await stopping;
  } finally {
    s.client.close();
    rmSync(s.dataDir, { recursive: true, force: true });
  }
});

test('a policy file that does not validate stops the start with status 1, naming the file and the line', async () => {
  const dir = tempDir();
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\nrules:\n- level: Metadata\n  verb: [get]\n`);
  try {
    await assert.rejects(startChildServer(['--audit-policy-file', policy, '--audit-log-path', join(dir, 'audit.log')], dir),
      (e: Error) => e.message.includes('exited early (1)') && e.message.includes(`audit policy file "${policy}", line 5: rules[0].verb: unknown field "verb"`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
