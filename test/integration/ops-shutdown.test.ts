// SIGTERM on the real CLI: /readyz fails its `shutdown` check first while
// requests are still served, then watches end cleanly, a long list that was
// in flight still completes, and the process exits 0. The list is held in
// flight by a client that stops reading 25 MB of answer, never by timing.
// At -v 3 each request leaves an httplog-style line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, Agent } from 'node:https';
import { rmSync } from 'node:fs';
import { startChildServer, tempDir } from '../support/server.js';
import { TestClient, credentialsFromKubeconfig } from '../support/client.js';
import { eventually } from '../support/eventually.js';

test('SIGTERM: readyz fails first, watches end cleanly, a long list in flight completes, exit 0', async () => {
  const dataDir = tempDir();
  const child = await startChildServer(['--shutdown-delay-duration', '2s', '--shutdown-watch-termination-grace-period', '5s', '--log-level', 'info', '--logging-format', 'json', '-v', '3'], dataDir);
  const client = TestClient.fromKubeconfig(child.kubeconfigPath);
  const creds = credentialsFromKubeconfig(child.kubeconfigPath);
  try {
    const payload = 'x'.repeat(900 * 1024);
    for (let i = 0; i < 28; i++) {
      const r = await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `big-${i}` }, data: { d: payload } });
      assert.equal(r.status, 201, r.text);
    }
    const watch = await client.watch('/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0');
    assert.equal(watch.status, 200);

    // The list starts, and its reader stops at once: its answer stays in flight.
    const agent = new Agent({ ca: creds.ca, cert: creds.cert, key: creds.key });
    const url = new URL('/api/v1/namespaces/default/configmaps', creds.server);
    const listing = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request(url, { agent }, (res) => { res.pause(); resolve(res); });
      req.on('error', reject);
      req.end();
    });
    assert.equal(listing.statusCode, 200);

    const exited = new Promise<number | null>((resolve) => child.process.once('exit', (code) => resolve(code)));
    child.process.kill('SIGTERM');
    await eventually('readyz reports the shutdown', async () => {
      const r = await client.anonymous().get('/readyz?verbose');
      return r.status === 500 && r.text.includes('[-]shutdown failed') ? r : undefined;
    });
    // Watches end cleanly once the delay is over and the listener closes.
    await eventually('the watch ends', async () => watch.ended || undefined, 20_000);

    // The list was held across all of that; it completes whole.
    const chunks: Buffer[] = [];
    listing.on('data', (c: Buffer) => chunks.push(c));
    await new Promise<void>((resolve, reject) => { listing.on('end', resolve); listing.on('error', reject); listing.resume(); });
    const list = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    assert.equal(list.items.filter((i: any) => i.metadata.name.startsWith('big-')).length, 28);
    agent.destroy();

    assert.equal(await exited, 0, child.output());
    const lines = child.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const httpLines = lines.filter((l) => l.msg === 'HTTP');
    const listLine = httpLines.find((l) => l.verb === 'LIST' && l.URI === '/api/v1/namespaces/default/configmaps');
    assert.ok(listLine, 'the list is logged');
    assert.equal(listLine.resp, 200);
    assert.match(listLine.auditID, /^[0-9a-f-]{36}$/);
    assert.match(listLine.latency, /^(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|ms|s)$/);
    assert.ok('userAgent' in listLine && 'srcIP' in listLine);
    assert.ok(httpLines.some((l) => l.verb === 'POST' && l.resp === 201));
  } finally {
    client.close();
    if (child.process.exitCode === null) child.process.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
