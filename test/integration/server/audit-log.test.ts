// The audit log backend: JSON lines in order, rotation by size with old
// files pruned by count, the legacy text format, and failures counted
// instead of thrown at the request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LogBackend, legacyLine } from '../../../src/server/audit/log.js';
import type { AuditEvent } from '../../../src/server/audit/event.js';
import { tempDir } from '../../support/server.js';
import { eventually } from '../../support/eventually.js';

function event(i: number, pad = 0): AuditEvent {
  return {
    kind: 'Event', apiVersion: 'audit.plat.io/v1', level: 'Metadata', auditID: `id-${i}`, stage: 'ResponseComplete',
    requestURI: `/api/v1/namespaces/default/configmaps/c${i}?x=${'y'.repeat(pad)}`, verb: 'get',
    user: { username: 'jane', groups: ['dev', 'system:authenticated'] }, sourceIPs: ['127.0.0.1'], userAgent: 'test',
    objectRef: { resource: 'configmaps', namespace: 'default', name: `c${i}`, apiGroup: '', apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 200 },
    requestReceivedTimestamp: '2026-01-01T00:00:00.000000Z', stageTimestamp: '2026-01-01T00:00:00.001000Z',
  };
}

const noErrors = (lost: number, err: unknown) => assert.fail(`lost ${lost}: ${String(err)}`);

test('events are appended as JSON lines, in order', async () => {
  const dir = tempDir();
  const path = join(dir, 'logs', 'audit.log');
  const log = await LogBackend.open({ path, format: 'json', maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0, onError: noErrors });
  for (let i = 0; i < 50; i++) log.process(JSON.stringify(event(i)));
  await log.close();
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((e) => e.auditID), Array.from({ length: 50 }, (_, i) => `id-${i}`));
  rmSync(dir, { recursive: true, force: true });
});

test('lines that arrive while a batch is written follow with the next batch, and close writes the last of them', async () => {
  const dir = tempDir();
  const path = join(dir, 'audit.log');
  const log = await LogBackend.open({ path, format: 'json', maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0, onError: noErrors });
  let i = 0;
  // A steady trickle over several flush intervals, so that lines keep arriving during writes.
  while (i < 300) {
    for (let k = 0; k < 10; k++) log.process(JSON.stringify(event(i++)));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  // Batches go out on their own, before any close (on a loaded machine the first may take a while).
  const linesOnDisk = () => readFileSync(path, 'utf8').split('\n').length - 1;
  for (const deadline = Date.now() + 20_000; linesOnDisk() === 0 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(linesOnDisk() > 0, 'batches were written before close');
  // The last lines come right before close, which writes them.
  for (let k = 0; k < 10; k++) log.process(JSON.stringify(event(i++)));
  await log.close();
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((e) => e.auditID), Array.from({ length: 310 }, (_, n) => `id-${n}`));
  rmSync(dir, { recursive: true, force: true });
});

test('a file that would pass --audit-log-maxsize rotates; --audit-log-maxbackup old files are kept', async () => {
  const dir = tempDir();
  const path = join(dir, 'audit.log');
  const log = await LogBackend.open({ path, format: 'json', maxAgeDays: 0, maxBackups: 2, maxSizeMB: 1, onError: noErrors });
  // ~100 KiB per event, 45 events: about 4.4 MiB, so four rotations.
  for (let i = 0; i < 45; i++) {
    log.process(JSON.stringify(event(i, 100 * 1024)));
    if (i % 10 === 9) await new Promise((r) => setImmediate(r));
  }
  await log.close();
  const files = readdirSync(dir).sort();
  assert.ok(files.includes('audit.log'));
  const backups = files.filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(f));
  assert.equal(backups.length, 2, files.join(' '));
  const ids: string[] = [];
  for (const f of [...backups, 'audit.log']) {
    const text = readFileSync(join(dir, f), 'utf8');
    assert.ok(Buffer.byteLength(text) <= 1024 * 1024, `${f} is over the limit`);
    assert.ok(text.endsWith('\n'), 'files end between events');
    ids.push(...text.trimEnd().split('\n').map((l) => JSON.parse(l).auditID));
  }
  assert.equal(ids.at(-1), 'id-44', 'the newest events are in the current file');
  rmSync(dir, { recursive: true, force: true });
});

test('the legacy format is upstream\'s line: received time, Go-quoted fields, groups as one quoted list', async () => {
  const line = legacyLine({ ...event(1), requestReceivedTimestamp: '2026-01-01T00:00:00.123450Z', impersonatedUser: { username: 'bob', groups: ['g'] } });
  assert.equal(line, '2026-01-01T00:00:00.12345Z AUDIT: id="id-1" stage="ResponseComplete" ip="127.0.0.1" method="get" user="jane" groups="\\"dev\\",\\"system:authenticated\\"" as="bob" asgroups="\\"g\\"" user-agent="test" namespace="default" uri="/api/v1/namespaces/default/configmaps/c1?x=" response="200"');
  // No user (a 401), no namespace, no answer yet, no fraction of a second; control characters as Go escapes them.
  const bare = legacyLine({ ...event(2), user: { username: '', groups: [] }, objectRef: undefined, responseStatus: undefined, sourceIPs: [], userAgent: 'a\x01\x7fé', requestURI: '/x\ty' });
  assert.equal(bare, '2026-01-01T00:00:00Z AUDIT: id="id-2" stage="ResponseComplete" ip="<unknown>" method="get" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="a\\x01\\x7fé" namespace="<none>" uri="/x\\ty" response="<deferred>"');
});

test('a log that cannot be written counts the lost events instead of failing requests', async () => {
  const dir = tempDir();
  const path = join(dir, 'sub', 'audit.log');
  let lost = 0;
  const log = await LogBackend.open({ path, format: 'json', maxAgeDays: 0, maxBackups: 0, maxSizeMB: 1, onError: (n) => { lost += n; } });
  // The file goes away under the writer: the rename of the next rotation fails, those events are lost, none throws.
  rmSync(join(dir, 'sub'), { recursive: true, force: true });
  for (let i = 0; i < 30; i++) log.process(JSON.stringify(event(i, 100 * 1024)));
  await log.close();
  assert.ok(lost > 0, 'events were counted as lost');
  rmSync(dir, { recursive: true, force: true });
});

// In a child process of its own: the test runner may use this process's standard output itself.
test('--audit-log-path - writes the lines to standard output', () => {
  const writer = new URL('./audit-stdout-writer.js', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [writer, 'id-1', 'id-2'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).auditID), ['id-1', 'id-2']);
});

/** An HTTP audit webhook answering each post with the next of `codes` (the last one repeats); records when posts came. */
async function webhookAnswering(codes: { status: number; retryAfter?: string }[]) {
  const { createServer } = await import('node:http');
  const posts: { at: number; items: number }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      posts.push({ at: Date.now(), items: JSON.parse(Buffer.concat(chunks).toString('utf8')).items.length });
      const answer = codes[Math.min(posts.length - 1, codes.length - 1)]!;
      if (answer.retryAfter) res.setHeader('Retry-After', answer.retryAfter);
      res.statusCode = answer.status;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/`, posts, close: () => server.close() };
}

async function webhookBackend(url: string, o: { maxBatchSize: number; initialBackoffMs?: number; throttle?: { qps: number; burst: number } }, onLost: (n: number) => void) {
  const { WebhookBackend } = await import('../../../src/server/audit/webhook.js');
  return new WebhookBackend({
    endpoint: { server: url }, bufferSize: 100, maxBatchSize: o.maxBatchSize, maxWaitMs: 3_600_000, timeoutMs: 10_000,
    initialBackoffMs: o.initialBackoffMs ?? 10, throttle: o.throttle, onError: (n) => onLost(n),
  });
}

test('the webhook backend counts the events of a batch the webhook refuses, without retrying a refusal', async () => {
  const hook = await webhookAnswering([{ status: 400 }]);
  let lost = 0;
  const backend = await webhookBackend(hook.url, { maxBatchSize: 2 }, (n) => { lost += n; });
  for (let i = 0; i < 5; i++) backend.process(JSON.stringify(event(i)));
  await backend.close();
  hook.close();
  assert.equal(hook.posts.length, 3, 'two full batches, then the rest at close; a 400 is not tried again');
  assert.equal(lost, 5);
});

test('a batch the webhook fails to take for a passing reason is tried again after a growing wait', async () => {
  // 500, then 429 with Retry-After, then taken: nothing lost.
  const hook = await webhookAnswering([{ status: 500 }, { status: 429, retryAfter: '1' }, { status: 200 }]);
  let lost = 0;
  const backend = await webhookBackend(hook.url, { maxBatchSize: 3, initialBackoffMs: 40 }, (n) => { lost += n; });
  for (let i = 0; i < 3; i++) backend.process(JSON.stringify(event(i)));
  await eventually('hook.posts.length === 3', async () => hook.posts.length === 3);
  await backend.close();
  hook.close();
  assert.equal(lost, 0);
  assert.deepEqual(hook.posts.map((p) => p.items), [3, 3, 3], 'the same batch each time');
  const [first, second, third] = hook.posts.map((p) => p.at);
  assert.ok(second! - first! >= 40, `the first retry waits the initial backoff (${second! - first!} ms)`);
  assert.ok(third! - second! >= 60, `the second waits 1.5 times longer (${third! - second!} ms)`);
});

test('a batch still failing after five tries is dropped and counted; a 503 with Retry-After counts as passing', async () => {
  const hook = await webhookAnswering([{ status: 503, retryAfter: '1' }]);
  let lost = 0;
  const backend = await webhookBackend(hook.url, { maxBatchSize: 2, initialBackoffMs: 5 }, (n) => { lost += n; });
  backend.process(JSON.stringify(event(0)));
  backend.process(JSON.stringify(event(1)));
  await eventually('lost === 2', async () => lost === 2);
  assert.equal(hook.posts.length, 5);
  await backend.close();
  hook.close();
});

test('closing does not wait out a retry: the batch gets one more try', async () => {
  const hook = await webhookAnswering([{ status: 500 }, { status: 200 }]);
  let lost = 0;
  const backend = await webhookBackend(hook.url, { maxBatchSize: 1, initialBackoffMs: 3_600_000 }, (n) => { lost += n; });
  backend.process(JSON.stringify(event(0)));
  await eventually('hook.posts.length === 1', async () => hook.posts.length === 1);
  await backend.close();
  hook.close();
  assert.equal(hook.posts.length, 2);
  assert.equal(lost, 0);
});

test('--audit-webhook-batch-throttle-qps spaces the batches out once the burst is spent', async () => {
  const hook = await webhookAnswering([{ status: 200 }]);
  const backend = await webhookBackend(hook.url, { maxBatchSize: 1, throttle: { qps: 10, burst: 1 } }, () => assert.fail('nothing lost'));
  // The first batch spends the burst and opens the connection, whose set-up would blur the spacing of the next arrival.
  backend.process(JSON.stringify(event(0)));
  await eventually('hook.posts.length === 1', async () => hook.posts.length === 1);
  for (let i = 1; i < 4; i++) backend.process(JSON.stringify(event(i)));
  await eventually('hook.posts.length === 4', async () => hook.posts.length === 4);
  await backend.close();
  hook.close();
  // The last two batches each wait for a token (one every 100 ms); unthrottled, all three arrive within a few ms.
  // The slack is for delivery delays on a busy machine, which only ever shift single arrivals.
  const span = hook.posts[3]!.at - hook.posts[1]!.at;
  assert.ok(span >= 150, `batches 2 to 4 arrived within ${span} ms`);
});
