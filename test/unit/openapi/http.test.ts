// Serving the documents: negotiation, hashes and redirects, caching headers,
// ETag revalidation, gzip and Status errors.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { OpenApiService } from '../../../src/server/openapi/index.js';
import { catalogRegistry } from '../../support/catalog.js';
import { negotiate } from '../../../src/server/openapi/http.js';

const protobufV2 = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const service = new OpenApiService(catalogRegistry(), { version: 'v1.32.0' });
let server: http.Server;
let base: string;

before(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!service.handle(req, res, url.pathname, url.searchParams)) {
      res.writeHead(418);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface Reply { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('negotiate follows the client preference order and q values', () => {
  const offers = ['application/json', protobufV2];
  assert.equal(negotiate(undefined, offers), 'application/json');
  assert.equal(negotiate('*/*', offers), 'application/json');
  assert.equal(negotiate(protobufV2, offers), protobufV2);
  assert.equal(negotiate(`${protobufV2}, application/json`, offers), protobufV2);
  assert.equal(negotiate(`application/json;q=0.5, ${protobufV2}`, offers), protobufV2);
  assert.equal(negotiate('application/json;q=0', offers), undefined);
  assert.equal(negotiate('text/html', offers), undefined);
});

test('paths outside /openapi are left to the caller', async () => {
  assert.equal((await get('/api/v1')).status, 418);
  assert.equal((await get('/openapi/v22')).status, 418);
});

test('/openapi/v2 as JSON, protobuf or 406', async () => {
  const json = await get('/openapi/v2');
  assert.equal(json.status, 200);
  assert.equal(json.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(json.body.toString()).swagger, '2.0');
  assert.equal(json.headers['cache-control'], 'no-cache, private');

  const pb = await get('/openapi/v2', { Accept: protobufV2 });
  assert.equal(pb.status, 200);
  // The `@` spelling does not parse as a Go media type, so the answer uses the dot spelling.
  assert.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.equal(pb.body.subarray(0, 5).toString('latin1'), '\n\x032.0', 'field 1 (swagger) comes first');

  const bad = await get('/openapi/v2', { Accept: 'application/xml' });
  assert.equal(bad.status, 406);
  const status = JSON.parse(bad.body.toString());
  assert.equal(status.kind, 'Status');
  assert.equal(status.reason, 'NotAcceptable');
  assert.equal(status.code, 406);
});

test('ETag revalidation answers 304', async () => {
  const first = await get('/openapi/v2');
  const etag = first.headers.etag!;
  assert.match(etag, /^"[0-9A-F]{128}"$/);
  const again = await get('/openapi/v2', { 'If-None-Match': etag });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  const pbEtag = (await get('/openapi/v2', { Accept: protobufV2 })).headers.etag;
  assert.notEqual(pbEtag, etag, 'each representation has its own tag');
  assert.equal((await get('/openapi/v2', { 'If-None-Match': '"stale"' })).status, 200);
});

test('gzip when the client accepts it', async () => {
  const plain = await get('/openapi/v2');
  const zipped = await get('/openapi/v2', { 'Accept-Encoding': 'gzip' });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.ok(zipped.body.length < plain.body.length / 3);
  assert.deepEqual(gunzipSync(zipped.body), plain.body);
  assert.equal((await get('/openapi/v2', { 'Accept-Encoding': 'gzip;q=0' })).headers['content-encoding'], undefined);
});

test('v3 index, hashed documents, stale hashes and unknown group versions', async () => {
  const index = await get('/openapi/v3');
  assert.equal(index.status, 200);
  assert.equal(index.headers['content-type'], 'application/json');
  const url = JSON.parse(index.body.toString()).paths['api/v1'].serverRelativeURL as string;
  const hash = new URL(url, base).searchParams.get('hash')!;

  const current = await get(url, { Accept: 'application/json' });
  assert.equal(current.status, 200);
  assert.match(current.headers['cache-control']!, /^public, immutable, max-age=\d+$/);
  assert.ok(current.headers.expires);
  assert.equal(current.headers.etag, `"${hash}"`);
  assert.equal(JSON.parse(current.body.toString()).openapi, '3.0.0');

  const stale = await get('/openapi/v3/api/v1?hash=0123', { Accept: 'application/json' });
  assert.equal(stale.status, 301);
  assert.equal(stale.headers.location, url);

  const unhashed = await get('/openapi/v3/api/v1');
  assert.equal(unhashed.status, 200);
  assert.equal(unhashed.headers['cache-control'], 'no-cache, private');
  assert.deepEqual(unhashed.body, current.body);

  const missing = await get('/openapi/v3/apis/nothing.example/v1');
  assert.equal(missing.status, 404);
  assert.equal(JSON.parse(missing.body.toString()).reason, 'NotFound');

  const v3pb = await get('/openapi/v3/api/v1', { Accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf' });
  assert.equal(v3pb.status, 406);

  assert.equal((await get('/openapi/v3/api/v1', { 'If-None-Match': `"${hash}"` })).status, 304);
});

test('HEAD has no body; other methods get 405', async () => {
  const head = await get('/openapi/v2', {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  const post = await get('/openapi/v2', {}, 'POST');
  assert.equal(post.status, 405);
  assert.equal(JSON.parse(post.body.toString()).reason, 'MethodNotAllowed');
});
