// --audit-log-mode and --audit-webhook-mode as upstream means them: in the
// blocking modes a request waits until its RequestReceived event is written
// or posted (each event posted on its own), and its answer ends once the
// ResponseComplete event is through; blocking-strict fails the request with
// 500 when the first fails, blocking counts the failure and goes on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { parsePrometheusText, value } from '../support/prometheus.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import type { ServerOptions } from '../../src/server/options.js';

const policy = `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ["/readyz*", "/healthz*", "/livez*", "/metrics"]\n- level: Metadata\n`;

/** An audit webhook that holds each post until the test answers it. */
async function startReceiver() {
  const posts: { body: any; answer: (code: number) => void }[] = [];
  // Once the test is done, later posts (the server's last events as it stops) are taken at once instead of waiting out its timeout.
  let takeAll = false;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (code: number) => { if (!res.headersSent) res.writeHead(code).end('{}'); };
      posts.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), answer });
      if (takeAll) answer(200);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), policy);
  writeFileSync(join(dir, 'webhook.kubeconfig'), JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'audit',
    clusters: [{ name: 'audit', cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events` } }],
    users: [{ name: 'audit', user: {} }], contexts: [{ name: 'audit', context: { cluster: 'audit', user: 'audit' } }],
  }));
  return {
    posts, dir,
    takeAll: () => {
      takeAll = true;
      for (const p of posts) p.answer(200);
    },
    close: () => { server.closeAllConnections(); server.close(); },
  };
}

async function withWebhookServer(mode: ServerOptions['auditWebhookMode'], body: (s: TestServer, r: Awaited<ReturnType<typeof startReceiver>>) => Promise<void>) {
  const receiver = await startReceiver();
  const s = await startTestServer({
    auditPolicyFile: join(receiver.dir, 'policy.yaml'), auditWebhookConfigFile: join(receiver.dir, 'webhook.kubeconfig'), auditWebhookMode: mode,
  });
  try {
    await body(s, receiver);
  } finally {
    receiver.takeAll();
    await s.close();
    receiver.close();
  }
}

test('webhook blocking: each event is posted on its own, and the request waits for its RequestReceived post', async () => {
  await withWebhookServer('blocking', async (s, receiver) => {
    let answered = false;
    const get = s.client.get('/api/v1/namespaces/default', { 'Audit-Id': 'blocking-1' }).then((r) => { answered = true; return r; });
    const received = await eventually('the RequestReceived post', async () => receiver.posts.find((p) => p.body.items[0].auditID === 'blocking-1'));
    assert.deepEqual(received.body.items.map((e: any) => e.stage), ['RequestReceived']);
    assert.equal(answered, false, 'the request waits while the webhook has not answered');
    received.answer(200);
    // The answer ends only once its ResponseComplete event is through too.
    const complete = await eventually('the ResponseComplete post', async () => receiver.posts.find((p) => p.body.items[0].stage === 'ResponseComplete' && p.body.items[0].auditID === 'blocking-1'));
    assert.equal(complete.body.items.length, 1);
    assert.equal(answered, false, 'the answer waits for its ResponseComplete post');
    complete.answer(200);
    assert.equal((await get).status, 200);
  });
});

test('webhook blocking-strict: a RequestReceived post the webhook refuses fails the request with 500; blocking only counts it', async () => {
  await withWebhookServer('blocking-strict', async (s, receiver) => {
    const get = s.client.get('/api/v1/namespaces/default', { 'Audit-Id': 'strict-1' });
    const received = await eventually('the RequestReceived post', async () => receiver.posts.find((p) => p.body.items[0].auditID === 'strict-1'));
    received.answer(400);
    // The 500 still waits for its ResponseComplete post, as every answer of a blocking backend does.
    const complete = await eventually('the ResponseComplete post', async () => receiver.posts.find((p) => p.body.items[0].stage === 'ResponseComplete' && p.body.items[0].auditID === 'strict-1'));
    complete.answer(200);
    const r = await get;
    assert.equal(r.status, 500, r.text);
    assert.equal(r.json.reason, 'InternalError');
    assert.equal(r.json.message, 'Internal error occurred: failed to store audit event');
  });
  await withWebhookServer('blocking', async (s, receiver) => {
    const get = s.client.get('/api/v1/namespaces/default', { 'Audit-Id': 'lenient-1' });
    const received = await eventually('the RequestReceived post', async () => receiver.posts.find((p) => p.body.items[0].auditID === 'lenient-1'));
    received.answer(400);
    const complete = await eventually('the ResponseComplete post', async () => receiver.posts.find((p) => p.body.items[0].stage === 'ResponseComplete' && p.body.items[0].auditID === 'lenient-1'));
    complete.answer(200);
    assert.equal((await get).status, 200);
    // The scrape is not audited (None): the one refused event is all the counter holds.
    assert.equal(value(parsePrometheusText((await s.client.get('/metrics')).text), 'apiserver_audit_error_total', { plugin: 'webhook' }), 1);
  });
});

test('log blocking: the RequestReceived line is in the file before the request goes on', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), policy);
  const logPath = join(dir, 'audit.log');
  const s = await startTestServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: logPath, auditLogMode: 'blocking', auditLogFormat: 'legacy' });
  try {
    const r = await s.client.get('/api/v1/namespaces/default', { 'Audit-Id': 'log-blocking-1' });
    assert.equal(r.status, 200);
    // Read at once: no background writer's delay to wait out.
    const lines = readFileSync(logPath, 'utf8').split('\n').filter((l) => l.includes('id="log-blocking-1"'));
    assert.match(lines[0] ?? '', /AUDIT: id="log-blocking-1" stage="RequestReceived" .* method="get" user="admin" .* response="<deferred>"$/);
  } finally {
    await s.close();
  }
});
