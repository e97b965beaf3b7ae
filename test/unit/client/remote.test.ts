// The client's behaviour where a real server cannot be made to misbehave on
// cue: a scripted HTTP server answers 429s, drops watch connections, sends
// bookmarks and 410s, and records what the client asked.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { RemoteClient, StatusError, WatchStream, parseWarning, parseWarnings } from '../../../src/client/index.js';
import type { ResourceType } from '../../../src/client/types.js';
import { tempDir } from '../../support/server.js';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;
let handler: Handler = (_q, res) => res.end();
const seen: { method: string; url: URL; headers: IncomingMessage['headers'] }[] = [];
const server = createServer((req, res) => {
  const url = new URL(req.url!, 'http://x');
  seen.push({ method: req.method!, url, headers: req.headers });
  handler(req, res, url);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
after(() => server.close());

const sleeps: number[] = [];
const newClient = (extra: Partial<ConstructorParameters<typeof RemoteClient>[0]> = {}, options: ConstructorParameters<typeof RemoteClient>[1] = {}) =>
  new RemoteClient({ server: base, namespace: 'default', ...extra }, { qps: 0, sleep: async (ms) => { sleeps.push(ms); }, onWarning: () => {}, ...options });

const json = (res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

test('429 with Retry-After is retried after the wait it names, up to maxRetries', async () => {
  let calls = 0;
  handler = (_q, res) => (++calls <= 2 ? json(res, 429, { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }, { 'Retry-After': '3' }) : json(res, 200, { kind: 'ConfigMap' }));
  sleeps.length = 0;
  const c = newClient();
  assert.deepEqual(await c.requestJson('GET', '/api/v1/namespaces/default/configmaps/x'), { kind: 'ConfigMap' });
  assert.deepEqual(sleeps, [3000, 3000]);

  calls = -100;
  const limited = newClient({}, { qps: 0, maxRetries: 1, sleep: async () => {} });
  await assert.rejects(limited.request('GET', '/x'), (e: unknown) => e instanceof StatusError && e.code === 429 && e.message === 'slow down');
});

test('an answer that is not a Status becomes one with client-go\'s reason and message for its code', async () => {
  handler = (_q, res) => { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end('404 page not found'); };
  await assert.rejects(newClient().request('GET', '/nowhere'), (e: unknown) => e instanceof StatusError && e.code === 404 && e.reason === 'NotFound' && e.message === 'the server could not find the requested resource');
});

test('basic auth, a token file, and Warning headers', async () => {
  handler = (_q, res) => { res.setHeader('Warning', ['299 - "first, with a comma"', '299 - "second \\"quoted\\""', 'garbage']); json(res, 200, {}); };
  const warned: string[] = [];
  await newClient({ username: 'user', password: 'pa:ss' }, { qps: 0, onWarning: (w) => warned.push(w) }).request('GET', '/a');
  assert.equal(seen.at(-1)!.headers.authorization, `Basic ${Buffer.from('user:pa:ss').toString('base64')}`);
  assert.deepEqual(warned, ['first, with a comma', 'second "quoted"']);
  const file = join(tempDir(), 'token');
  writeFileSync(file, 'from-file\n');
  await newClient({ tokenFile: file }).request('GET', '/b');
  assert.equal(seen.at(-1)!.headers.authorization, 'Bearer from-file');
  assert.equal(parseWarning('199 - "not 299"'), undefined);
  assert.deepEqual(parseWarnings('299 - "a, b", 199 x "skipped", 299 agent "c" "Wed, 21 Oct 2015 07:28:00 GMT"'), ['a, b', 'c']);
});

test('a watch resumes from the last version after a dropped stream, follows bookmarks, and relists on 410 yielding only the difference', async () => {
  const type: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] };
  const obj = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
  const line = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;
  let watches = 0;
  handler = (_q, res, url) => {
    if (url.searchParams.get('watch') !== '1') {
      // The relist after the 410: a kept, a changed and a new object; "gone" has vanished.
      json(res, 200, { kind: 'ConfigMapList', metadata: { resourceVersion: '40' }, items: [obj('kept', '11'), obj('changed', '35'), obj('new', '36')] });
      return;
    }
    watches++;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (watches === 1) {
      res.write(line('ADDED', obj('kept', '11')) + line('ADDED', obj('changed', '12')));
      res.write(line('ADDED', obj('gone', '13')));
      setImmediate(() => res.destroy()); // the connection drops
    } else if (watches === 2) res.end(line('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '20' } }));
    else if (watches === 3) res.end(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 20 (30)' }));
    else res.write(line('MODIFIED', obj('new', '41')));
  };
  seen.length = 0;
  const events: string[] = [];
  const configMaps = await newClient().resource(type);
  for await (const e of configMaps.watch({ resourceVersion: '10' })) {
    events.push(`${e.type} ${e.object.metadata?.name}`);
    if (events.length === 7) break;
  }
  assert.deepEqual(events, ['ADDED kept', 'ADDED changed', 'ADDED gone', 'MODIFIED changed', 'ADDED new', 'DELETED gone', 'MODIFIED new']);
  const watchVersions = seen.filter((r) => r.url.searchParams.get('watch') === '1').map((r) => r.url.searchParams.get('resourceVersion'));
  assert.deepEqual(watchVersions, ['10', '13', '20', '40']);
  assert.ok(seen.filter((r) => r.url.searchParams.get('watch') === '1').every((r) => r.url.searchParams.get('allowWatchBookmarks') === 'true'));
});

test('with protobuf on, gets and lists of built-in kinds ask for it first and decode the envelope; Status errors too', async () => {
  const { builtinSchemaLookup, encodeProtobufObject } = await import('../../../src/api/protobuf/index.js');
  const { builtinKinds } = await import('../../../src/api/catalog.js');
  const schemas = builtinSchemaLookup(builtinKinds);
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb', namespace: 'default', resourceVersion: '5' }, data: { a: 'b' } };
  handler = (req, res, url) => {
    if (!String(req.headers.accept).startsWith('application/vnd.plat.protobuf')) return json(res, 406, { kind: 'Status', code: 406 });
    res.writeHead(url.pathname.endsWith('/missing') ? 404 : 200, { 'Content-Type': 'application/vnd.plat.protobuf' });
    if (url.pathname.endsWith('/missing')) res.end(encodeProtobufObject({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code: 404, reason: 'NotFound', message: 'configmaps "missing" not found' }, schemas('v1', 'Status')!));
    else if (url.pathname.endsWith('/configmaps')) res.end(encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '6' }, items: [configMap] }, schemas('v1', 'ConfigMapList')!));
    else res.end(encodeProtobufObject(configMap, schemas('v1', 'ConfigMap')!));
  };
  const type: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] };
  const configMaps = await newClient({}, { qps: 0, protobuf: true }).resource(type);
  assert.deepEqual(await configMaps.get('pb'), configMap);
  const page = await configMaps.list();
  assert.deepEqual([page.resourceVersion, page.items], ['6', [configMap]]);
  await assert.rejects(configMaps.get('missing'), (e: unknown) => e instanceof StatusError && e.code === 404 && e.message === 'configmaps "missing" not found');
  // A kind this client has no schema of is read as JSON.
  const widgets = await newClient({}, { qps: 0, protobuf: true }).resource({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true, verbs: [] });
  await assert.rejects(widgets.get('w'), (e: unknown) => e instanceof StatusError && e.code === 406);
});

test('the client-side rate limit spaces requests beyond the burst at 1/qps', async () => {
  handler = (_q, res) => json(res, 200, {});
  const waits: number[] = [];
  const clock = { now: () => 1_000_000, setTimeout: () => ({}), clearTimeout: () => {} };
  const c = newClient({}, { qps: 2, burst: 2, clock, sleep: async (ms) => { waits.push(ms); } });
  for (let i = 0; i < 4; i++) await c.request('GET', '/limited');
  // Two go at once (the burst); the bucket refills at 2 a second, so the third waits half a second and the fourth a whole one.
  assert.deepEqual(waits, [500, 1000]);
});

test('with protobuf on, a watch reads length-prefixed frames of enveloped WatchEvents, split anywhere across chunks', async () => {
  const pb = await import('../../../src/api/protobuf/index.js');
  const { WatchEvent } = await import('../../../src/api/meta/v1.js');
  const { builtinKinds } = await import('../../../src/api/catalog.js');
  const schemas = pb.builtinSchemaLookup(builtinKinds);
  const obj = (name: string, rv: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', resourceVersion: rv }, data: { text: 'é'.repeat(50) } });
  const frame = (type: string, o: Record<string, unknown>) => {
    const event = pb.encodeEnvelope('v1', 'WatchEvent', pb.encodeMessage({ type, object: pb.encodeProtobufObject(o, schemas('v1', 'ConfigMap')!) }, WatchEvent));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(event.length);
    return Buffer.concat([length, event]);
  };
  handler = (req, res) => {
    assert.match(String(req.headers.accept), /^application\/vnd\.plat\.protobuf/);
    res.writeHead(200, { 'Content-Type': 'application/vnd.plat.protobuf;stream=watch' });
    const bytes = Buffer.concat([frame('ADDED', obj('a', '11')), frame('MODIFIED', obj('a', '12')), frame('DELETED', obj('a', '13'))]);
    // Three writes that cut through a length prefix and through an event.
    res.write(bytes.subarray(0, 2));
    setImmediate(() => { res.write(bytes.subarray(2, 70)); setImmediate(() => res.write(bytes.subarray(70))); });
  };
  const type: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] };
  const configMaps = await newClient({}, { qps: 0, protobuf: true }).resource(type);
  const events: unknown[] = [];
  for await (const e of configMaps.watch({ resourceVersion: '10' })) {
    events.push([e.type, e.object]);
    if (events.length === 3) break;
  }
  assert.deepEqual(events, [['ADDED', obj('a', '11')], ['MODIFIED', obj('a', '12')], ['DELETED', obj('a', '13')]]);
});

test('a JSON watch keeps a character whole when a chunk ends inside it', async () => {
  const line = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'é' } } })}\n`);
  const cut = line.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
  // The response body as two reads, cut there (a socket may cut anywhere).
  const body = Readable.from([line.subarray(0, cut), line.subarray(cut)], { objectMode: false });
  const batches: string[] = [];
  for await (const batch of new WatchStream(body as unknown as IncomingMessage).batches()) batches.push(...batch.map((e) => e.object.metadata?.name));
  assert.deepEqual(batches, ['é']);
});
