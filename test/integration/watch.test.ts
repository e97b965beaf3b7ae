// Watch streams over real HTTPS: ordering, synthetic ADDED events, selector
// transitions, bookmarks, 410 for compacted history, 504 for future versions.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';

let s: TestServer;
const ns = 'watched';
const base = `/api/v1/namespaces/${ns}/configmaps`;
const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite', etcdCompactionIntervalMs: 1500 });
  await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
after(async () => { await s.close(); });

test('watch from a resourceVersion delivers every later change in order', async () => {
  const first = await s.client.post(base, cm('a'));
  const rv = first.json.metadata.resourceVersion;
  const w = await s.client.watch(`${base}?watch=1&resourceVersion=${rv}`);
  assert.equal(w.status, 200);
  assert.equal(w.headers['content-type'], 'application/json');
  const b = await s.client.post(base, cm('b'));
  const a2 = await s.client.put(`${base}/a`, { ...first.json, data: { x: '1' } });
  await s.client.delete(`${base}/b`);
  const events = await w.waitFor(3);
  w.close();
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'b'], ['MODIFIED', 'a'], ['DELETED', 'b']]);
  assert.equal(events[0].object.metadata.resourceVersion, b.json.metadata.resourceVersion);
  assert.equal(events[1].object.metadata.resourceVersion, a2.json.metadata.resourceVersion);
  assert.ok(Number(events[2].object.metadata.resourceVersion) > Number(a2.json.metadata.resourceVersion), 'a deletion carries its own revision');
  await s.client.delete(`${base}/a`);
});

test('watch without a resourceVersion starts with the current state as ADDED events', async () => {
  await s.client.post(base, cm('s1'));
  await s.client.post(base, cm('s2'));
  for (const rv of ['', '&resourceVersion=0']) {
    const w = await s.client.watch(`${base}?watch=true${rv}`);
    const events = await w.waitFor(2);
    w.close();
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 's1'], ['ADDED', 's2']]);
  }
  await s.client.delete(`${base}/s1`);
  await s.client.delete(`${base}/s2`);
});

test('label selectors: leaving the selection is DELETED, entering it is ADDED', async () => {
  const w = await s.client.watch(`${base}?watch=1&labelSelector=team%3Dblue`);
  const c = await s.client.post(base, cm('sel', { team: 'red' }));
  const toBlue = await s.client.put(`${base}/sel`, { ...c.json, metadata: { ...c.json.metadata, labels: { team: 'blue' } } });
  const stillBlue = await s.client.put(`${base}/sel`, { ...toBlue.json, data: { k: 'v' } });
  await s.client.put(`${base}/sel`, { ...stillBlue.json, metadata: { ...stillBlue.json.metadata, labels: { team: 'red' } } });
  const events = await w.waitFor(3);
  w.close();
  assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
  assert.equal(events[2].object.metadata.labels.team, 'red');
  await s.client.delete(`${base}/sel`);
});

test('field selectors filter watches; the legacy /watch/ path works', async () => {
  const w = await s.client.watch(`/api/v1/watch/namespaces/${ns}/configmaps?fieldSelector=metadata.name%3Dpicked`);
  await s.client.post(base, cm('ignored'));
  await s.client.post(base, cm('picked'));
  await w.waitFor(1);
  // Another that does not match, then the picked one's deletion: a watch that let the others through shows them before it.
  await s.client.post(base, cm('ignored-too'));
  await s.client.delete(`${base}/picked`);
  const events = await w.waitFor(2);
  w.close();
  assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED picked', 'DELETED picked']);
});

test('timeoutSeconds ends the stream cleanly, with a bookmark when asked', async () => {
  const list = await s.client.get(base);
  const w = await s.client.watch(`${base}?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=${list.json.metadata.resourceVersion}`);
  const events = await w.waitEnd(5000);
  assert.equal(w.ended, true);
  const bookmark = events.at(-1);
  assert.equal(bookmark.type, 'BOOKMARK');
  assert.equal(bookmark.object.kind, 'ConfigMap');
  assert.deepEqual(Object.keys(bookmark.object.metadata), ['resourceVersion']);
  assert.ok(Number(bookmark.object.metadata.resourceVersion) >= Number(list.json.metadata.resourceVersion));
});

test('a resourceVersion older than the retained history gets an ERROR event with 410 Expired', async () => {
  const old = await s.client.post(base, cm('old'));
  for (let i = 0; i < 5; i++) await s.client.put(`${base}/old`, { ...old.json, metadata: { ...old.json.metadata, resourceVersion: undefined }, data: { i: String(i) } });
  // History older than 1.5 s is compacted away; wait for it, bounded.
  const deadline = Date.now() + 15_000;
  let events: any[] = [];
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    await s.client.post(base, cm(`tick-${Date.now()}`));
    const w = await s.client.watch(`${base}?watch=1&resourceVersion=${old.json.metadata.resourceVersion}`);
    events = await w.waitFor(1, 2000);
    w.close();
    if (events[0]?.type === 'ERROR') break;
  }
  assert.equal(events[0]?.type, 'ERROR');
  assert.equal(events[0].object.kind, 'Status');
  assert.equal(events[0].object.code, 410);
  assert.equal(events[0].object.reason, 'Expired');
  assert.match(events[0].object.message, /too old resource version/);
});

test('a resourceVersion the store has not reached answers 504 with Retry-After', async () => {
  const r = await s.client.get(`${base}?watch=1&resourceVersion=99999999`);
  assert.equal(r.status, 504);
  assert.equal(r.json.reason, 'Timeout');
  assert.match(r.json.message, /Too large resource version/);
  assert.equal(r.headers['retry-after'], '1');
});

test('watch in Table form, for kubectl get -w', async () => {
  const w = await s.client.watch(`${base}?watch=1`, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  const events = await w.waitFor(1);
  w.close();
  assert.equal(events[0].object.kind, 'Table');
  assert.equal(events[0].object.rows.length, 1);
  assert.ok(events[0].object.columnDefinitions.length > 0);
});

test('watch refuses YAML (406) and resourceVersionMatch (422)', async () => {
  const yaml = await s.client.get(`${base}?watch=1`, { Accept: 'application/yaml' });
  assert.equal(yaml.status, 406);
  assert.equal(yaml.json.reason, 'NotAcceptable');
  const match = await s.client.get(`${base}?watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan`);
  assert.equal(match.status, 422);
  assert.equal(match.json.reason, 'Invalid');
});

test('an expired continue token answers 410 with a fresh token that goes on from there', async () => {
  for (const n of ['p1', 'p2', 'p3', 'p4']) await s.client.post(base, cm(n, { page: 'yes' }));
  const first = await s.client.get(`${base}?limit=2&labelSelector=page%3Dyes`);
  assert.deepEqual(first.json.items.map((i: any) => i.metadata.name), ['p1', 'p2']);
  const token = encodeURIComponent(first.json.metadata.continue);
  const deadline = Date.now() + 15_000;
  let expired: any;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    await s.client.post(base, cm(`nudge-${Date.now()}`));
    const r = await s.client.get(`${base}?limit=2&labelSelector=page%3Dyes&continue=${token}`);
    if (r.status === 410) { expired = r; break; }
  }
  assert.ok(expired, 'the token expired once its snapshot was compacted');
  assert.equal(expired.json.reason, 'Expired');
  assert.ok(expired.json.metadata.continue, 'a fresh continue token comes with the 410');
  const rest = await s.client.get(`${base}?limit=2&labelSelector=page%3Dyes&continue=${encodeURIComponent(expired.json.metadata.continue)}`);
  assert.equal(rest.status, 200);
  assert.deepEqual(rest.json.items.map((i: any) => i.metadata.name), ['p3', 'p4']);
});

test('deletecollection honours limit: one page goes', async () => {
  for (const n of ['dc1', 'dc2', 'dc3']) await s.client.post(base, cm(n, { dc: 'yes' }));
  assert.equal((await s.client.delete(`${base}?labelSelector=dc%3Dyes&limit=2`)).status, 200);
  const left = await s.client.get(`${base}?labelSelector=dc%3Dyes`);
  assert.deepEqual(left.json.items.map((i: any) => i.metadata.name), ['dc3']);
});

test('a watcher that stops reading is cut off; the others get every event', { timeout: 60_000 }, async () => {
  // A server whose watchers may fall 50 events behind; 64 KiB objects fill the socket buffers quickly.
  const small = await startTestServer({ watchMaxBufferedEvents: 50 });
  try {
    await small.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const from = (await small.client.get(base)).json.metadata.resourceVersion;
    const { request } = await import('node:https');
    const slowRes = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request(new URL(`${base}?watch=1&resourceVersion=${from}`, small.client.creds.server),
        { ca: small.client.creds.ca, cert: small.client.creds.cert, key: small.client.creds.key }, resolve);
      req.on('error', reject);
      req.end();
    });
    slowRes.pause(); // asks, then does not read
    const fast = await small.client.watch(`${base}?watch=1&resourceVersion=${from}`);
    // Enough to overflow what a reader that never reads can hold: at most 4 MiB of
    // kernel send buffer (net.ipv4.tcp_wmem's maximum), a receive window that
    // does not grow while nothing is read, and the 50 events: about 120 events
    // of 64 KiB; here it was cut off after about 80.
    const writes = 300;
    const payload = { blob: 'x'.repeat(64 * 1024) };
    for (let i = 0; i < writes; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => small.client.post(base, cm(`slow-${i + j}`, {}, payload))));
    }
    const events = await fast.waitFor(writes, 30_000);
    fast.close();
    assert.equal(events.length, writes, 'the reading watcher saw every event');
    let slowBytes = 0;
    slowRes.on('data', (c: Buffer) => { slowBytes += c.length; });
    const ended = await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), 20_000);
      slowRes.on('end', () => { clearTimeout(t); resolve(true); });
      slowRes.on('close', () => { clearTimeout(t); resolve(true); });
      slowRes.resume();
    });
    assert.ok(ended, 'the server ended the slow stream');
    assert.ok(slowBytes < writes * 64 * 1024, 'the slow watcher did not get everything');
  } finally {
    await small.close();
  }
});
