// Hostile request bodies against a real server over HTTPS: invalid times,
// keys named like Object.prototype members, deep nesting, integers outside
// their type and repeated YAML keys, in JSON, YAML and protobuf, on create
// and update. After each class the server must still be ready and a canary
// object written beforehand unchanged. Last, an object that cannot be
// encoded is put straight into the store (as one written before the checks
// existed would be), and protobuf reads and watches of it must fail alone.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import { startTestServer, tempDir, TestServer } from '../support/server.js';
import type { Response } from '../support/client.js';
import { builtinKinds } from '../../src/api/catalog.js';
import type { KubeObject } from '../../src/api/kind.js';
import { builtinSchemaLookup, decodeEnvelope, decodeProtobufObject, encodeProtobufObject } from '../../src/api/protobuf/index.js';
import { Reader } from '../../src/machinery/protobufwire.js';
import { openBackend } from '../../src/storage/index.js';
import { toStoredBytes } from '../../src/registry/objects.js';
import { maxNestingDepth } from '../../src/machinery/limits.js';
import { rfc3339Layout, rfc3339MicroLayout } from '../../src/machinery/time.js';
import { upstreamCompat, vocabulary } from '../../src/machinery/vocabulary.js';

const ns = 'hostile';
const api = `/api/v1/namespaces/${ns}`;
const pbType = upstreamCompat.protobufMediaType;
const lookup = builtinSchemaLookup(builtinKinds);
const dataDir = tempDir();
let s: TestServer;
let canary: string;

type Format = 'json' | 'yaml' | 'protobuf';
const contentTypes: Record<Format, string> = { json: 'application/json', yaml: 'application/yaml', protobuf: pbType };
const plurals: Record<string, string> = { ConfigMap: 'configmaps', Secret: 'secrets', ServiceAccount: 'serviceaccounts', Namespace: 'namespaces', Event: 'events' };

/** The collection path of a kind (namespaces are cluster-scoped). */
const collection = (kind: string) => (kind === 'Namespace' ? '/api/v1/namespaces' : `${api}/${plurals[kind]}`);

function encode(obj: KubeObject, format: Format): string | Buffer {
  if (format === 'json') return JSON.stringify(obj);
  if (format === 'yaml') return YAML.stringify(obj);
  return encodeProtobufObject(obj, lookup(obj.apiVersion!, obj.kind!)!);
}

/** Sends raw text or bytes; answers are asked for in JSON. */
function send(method: string, path: string, body: string | Buffer, format: Format = 'json'): Promise<Response> {
  return s.client.send(method, path, { raw: body, headers: { 'Content-Type': contentTypes[format], Accept: 'application/json' } });
}

const create = (obj: KubeObject, format: Format = 'json', query = '') => send('POST', `${collection(obj.kind!)}${query}`, encode(obj, format), format);
const update = (obj: KubeObject, format: Format = 'json', query = '') => send('PUT', `${collection(obj.kind!)}/${obj.metadata!.name}${query}`, encode(obj, format), format);

function assertStatus(r: Response, code: number, reason: string, message?: string): void {
  assert.equal(r.status, code, r.text.slice(0, 500));
  assert.equal(r.json?.kind, 'Status');
  assert.equal(r.json.code, code);
  assert.equal(r.json.reason, reason);
  if (message !== undefined) assert.equal(r.json.message, message);
}

/** The server answers /readyz and the canary is exactly as it was written. */
async function stillServing(): Promise<void> {
  assert.equal((await s.client.get('/readyz')).status, 200);
  const now = await s.client.get(`${api}/configmaps/canary`);
  assert.equal(now.status, 200);
  assert.equal(now.text, canary);
}

const objectOf = (kind: string, name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1', kind, metadata: { name },
  ...(kind === 'Event' ? { involvedObject: { name: 'x' } } : {}),
  ...extra,
});

const handled = (kind: string) => `${kind} in version "v1" cannot be handled as a ${kind}: `;

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite', dataDir });
  assert.equal((await s.client.post('/api/v1/namespaces', objectOf('Namespace', ns))).status, 201);
  assert.equal((await create(objectOf('ConfigMap', 'canary', { data: { a: '1' } }))).status, 201);
  canary = (await s.client.get(`${api}/configmaps/canary`)).text;
});

after(async () => {
  await s?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

// ---- class 1: times --------------------------------------------------------

test('invalid times are a 400 with Go\'s parse error, on every kind, JSON and YAML, create and update', async () => {
  const time = (value: string) => `parsing time ${JSON.stringify(value)} as "${rfc3339Layout}": cannot parse ${JSON.stringify(value)} as "2006"`;
  const cases: Array<[KubeObject, string]> = [
    [objectOf('Event', 't1', { firstTimestamp: 'x' }), time('x')],
    [objectOf('Event', 't2', { lastTimestamp: 'yesterday' }), time('yesterday')],
    [objectOf('Event', 't3', { eventTime: '2024-01-02T03:04:05Z' }), `parsing time "2024-01-02T03:04:05Z" as "${rfc3339MicroLayout}": cannot parse "Z" as ".000000"`],
    [objectOf('Event', 't4', { series: { count: 1, lastObservedTime: 'x' } }), `parsing time "x" as "${rfc3339MicroLayout}": cannot parse "x" as "2006"`],
    [objectOf('ConfigMap', 't5', { metadata: { name: 't5', managedFields: [{ manager: 'm', operation: 'Update', time: 'x' }] } }), time('x')],
    [objectOf('Secret', 't6', { metadata: { name: 't6', creationTimestamp: '2024-13-01T00:00:00Z' } }), 'parsing time "2024-13-01T00:00:00Z": month out of range'],
    [objectOf('ServiceAccount', 't7', { metadata: { name: 't7', deletionTimestamp: '2024-02-30T00:00:00Z' } }), 'parsing time "2024-02-30T00:00:00Z": day out of range'],
    [objectOf('Namespace', 't8', { status: { conditions: [{ type: 'T', status: 'True', lastTransitionTime: 'x' }] } }), time('x')],
  ];
  for (const [obj, message] of cases) {
    for (const format of ['json', 'yaml'] as const) {
      assertStatus(await create(obj, format), 400, 'BadRequest', handled(obj.kind!) + message);
      const name = obj.metadata!.name!;
      assert.equal((await s.client.get(`${collection(obj.kind!)}/${name}`)).status, 404, 'nothing was stored');
    }
    // An update of an existing object is read the same way.
    const valid = objectOf(obj.kind!, obj.metadata!.name!);
    assert.equal((await create(valid)).status, 201);
    assertStatus(await update({ ...obj, metadata: { ...obj.metadata, name: valid.metadata!.name } }), 400, 'BadRequest', handled(obj.kind!) + message);
  }
  // A non-string time is refused as Go's decoder refuses it.
  assertStatus(await create(objectOf('Event', 't9', { firstTimestamp: 5 })), 400, 'BadRequest', `${handled('Event')}json: cannot unmarshal number into Go value of type string`);
  // Valid times come back in UTC at their type's precision, the same in JSON and protobuf.
  const ok = await create(objectOf('Event', 't10', { firstTimestamp: '2024-01-02T03:04:05.9+02:00', eventTime: '2024-01-02T03:04:05.123456-01:30' }), 'yaml');
  assert.equal(ok.status, 201);
  assert.deepEqual([ok.json.firstTimestamp, ok.json.eventTime], ['2024-01-02T01:04:05Z', '2024-01-02T04:34:05.123456Z']);
  const pb = await s.client.get(`${api}/events/t10`, { Accept: pbType });
  const back = decodeProtobufObject(pb.body, lookup);
  assert.deepEqual([back.firstTimestamp, back.eventTime], ['2024-01-02T01:04:05Z', '2024-01-02T04:34:05.123456Z']);
  await stillServing();
});

// ---- class 2: keys named like Object.prototype members ---------------------------

const names = ['constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];
const mapOf = (value: (n: string) => string) => Object.fromEntries(names.map((n) => [n, value(n)]));

/** The client's labels: a namespace also carries one with its own name, set by the server. */
function clientLabels(o: any): Record<string, string> {
  const labels = { ...o.metadata.labels };
  if (o.kind === 'Namespace') {
    delete labels[vocabulary.namespaceNameLabel];
    delete labels[upstreamCompat.namespaceNameLabel];
  }
  return labels;
}

/** Per kind: a body carrying maps keyed by those names, and the maps (and type) to compare after a round trip. */
function pollutingObject(kind: string, name: string, round: string): { body: KubeObject; expect: (o: any) => unknown[] } {
  const labels = mapOf((n) => `${n}-${round}`);
  const annotations = mapOf((n) => `${n} ${round}`);
  const metadata = { name, labels, annotations };
  const meta = (o: any) => [clientLabels(o), o.metadata.annotations];
  switch (kind) {
    case 'ConfigMap':
      return { body: objectOf(kind, name, { metadata, data: mapOf((n) => `v-${n}-${round}`) }), expect: (o) => [...meta(o), o.data] };
    case 'Secret': {
      const data = mapOf((n) => Buffer.from(`${n}-${round}`).toString('base64'));
      return { body: objectOf(kind, name, { metadata, data, type: 'constructor' }), expect: (o) => [...meta(o), o.data, o.type] };
    }
    default:
      return { body: objectOf(kind, name, { metadata }), expect: meta };
  }
}

test('keys named like Object.prototype members are ordinary keys: stored and returned exactly, JSON, YAML and protobuf, create and update', async () => {
  for (const kind of ['ConfigMap', 'Secret', 'ServiceAccount', 'Namespace', 'Event']) {
    for (const format of ['json', 'yaml', 'protobuf'] as const) {
      const name = `p-${kind.toLowerCase()}-${format}`;
      const first = pollutingObject(kind, name, 'one');
      const created = await create(first.body, format);
      assert.equal(created.status, 201, `${kind} ${format}: ${created.text.slice(0, 300)}`);
      const wanted = first.expect(first.body);
      for (const got of [created.json, (await s.client.get(`${collection(kind)}/${name}`)).json,
        decodeProtobufObject((await s.client.get(`${collection(kind)}/${name}`, { Accept: pbType })).body, lookup)]) {
        assert.deepEqual(first.expect(got), wanted, `${kind} ${format}`);
      }
      const second = pollutingObject(kind, name, 'two');
      const updated = await update({ ...second.body, metadata: { ...second.body.metadata, resourceVersion: created.json.metadata.resourceVersion } }, format);
      assert.equal(updated.status, 200, `${kind} ${format}: ${updated.text.slice(0, 300)}`);
      assert.deepEqual(second.expect(updated.json), second.expect(second.body), `${kind} ${format} update`);
    }
  }
  // Selectors see them as the label keys they are, and field selectors name only the kind's fields.
  const selected = await s.client.get(`${api}/configmaps?labelSelector=${encodeURIComponent('toString=toString-two')}`);
  assert.deepEqual(selected.json.items.map((i: KubeObject) => i.metadata!.name).sort(), ['p-configmap-json', 'p-configmap-protobuf', 'p-configmap-yaml']);
  for (const field of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    assertStatus(await s.client.get(`${api}/events?fieldSelector=${encodeURIComponent(`${field}=x`)}`), 400, 'BadRequest', `field label not supported: ${field}`);
  }
  await stillServing();
});

test('a __proto__ key is refused where upstream\'s rules refuse it and kept where they allow it', async () => {
  const label = await send('POST', `${api}/configmaps`, '{"metadata":{"name":"proto-label","labels":{"__proto__":"x"}}}');
  assertStatus(label, 422, 'Invalid');
  assert.match(label.json.message, /metadata\.labels: Invalid value: "__proto__": name part must consist of alphanumeric characters/);
  // `__proto__` matches the config key rule [-._a-zA-Z0-9]+.
  const data = await send('POST', `${api}/configmaps`, '{"metadata":{"name":"proto-data"},"data":{"__proto__":"x","a":"y"}}');
  assert.equal(data.status, 201);
  assert.equal((await s.client.get(`${api}/configmaps/proto-data`)).text.includes('"data":{"__proto__":"x","a":"y"}'), true);
  await stillServing();
});

// ---- class 3: nesting ------------------------------------------------------

/** A ConfigMap whose managedFields[0].fieldsV1 brings the whole object to `levels` (the only free-form field). */
function nestedTo(levels: number, name: string): KubeObject {
  let fields: Record<string, unknown> = {};
  for (let i = 5; i < levels; i++) fields = { 'f:a': fields };
  return objectOf('ConfigMap', name, { metadata: { name, managedFields: [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: fields }] } });
}

test('input nested deeper than the limit is a 400 in every format, on create, update and patch; exactly the limit is accepted', async () => {
  const tooDeep = `the object provided is nested too deeply: exceeded max depth of ${maxNestingDepth}`;
  const hostile: Array<[string, Format]> = [
    ['['.repeat(100_000), 'json'],
    [`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'json'],
    [`{"metadata":{"name":"d"},"data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`, 'json'],
    [`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'yaml'],
    [`metadata:\n  name: d\ndata: ${'{a: '.repeat(20_000)}1${'}'.repeat(20_000)}\n`, 'yaml'],
    [`${'- '.repeat(50_000)}x\n`, 'yaml'],
  ];
  // Twice: the yaml package once aborted the process on the second deep document.
  for (let round = 0; round < 2; round++) {
    for (const [body, format] of hostile) {
      assertStatus(await send('POST', `${api}/configmaps`, body, format), 400, 'BadRequest', tooDeep);
      assertStatus(await send('PUT', `${api}/configmaps/canary`, body, format), 400, 'BadRequest', tooDeep);
    }
  }
  for (const format of ['json', 'yaml', 'protobuf'] as const) {
    assertStatus(await create(nestedTo(maxNestingDepth + 1, `deep-${format}`), format), 400, 'BadRequest', tooDeep);
    const atLimit = await create(nestedTo(maxNestingDepth, `limit-${format}`), format);
    assert.equal(atLimit.status, 201, `${format}: ${atLimit.text.slice(0, 300)}`);
  }
  const patch = (type: string, body: string, query = '') => s.client.send('PATCH', `${api}/configmaps/canary${query}`, { raw: body, headers: { 'Content-Type': `application/${type}` } });
  assertStatus(await patch('merge-patch+json', `{"data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`), 400, 'BadRequest', tooDeep);
  assertStatus(await patch('apply-patch+yaml', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, '?fieldManager=x'), 400, 'BadRequest', tooDeep);
  await stillServing();
});

// ---- class 4: integers -------------------------------------------------------

test('integers outside their type are a 400 with the decoder\'s message, for every integer field, JSON and YAML, create and update', async () => {
  const int = (kind: string, field: string, bits: number, literal: string) => `${handled(kind)}json: cannot unmarshal number ${literal} into Go struct field ${kind}.${field} of type int${bits}`;
  /** JSON text with number literals as written: `meta` goes into metadata, `top` beside it. */
  const json = (kind: string, name: string, { meta = '', top = '' }) =>
    `{"apiVersion":"v1","kind":"${kind}","metadata":{"name":"${name}"${meta && `,${meta}`}}${kind === 'Event' ? ',"involvedObject":{"name":"x"}' : ''}${top && `,${top}`}}`;
  for (const literal of ['1e10', '18446744073709551616', '2147483648', '-2147483649', '1.5', '1.0']) {
    assertStatus(await send('POST', `${api}/events`, json('Event', 'i1', { top: `"count":${literal}` })), 400, 'BadRequest', int('Event', 'count', 32, literal));
    assertStatus(await send('POST', `${api}/events`, json('Event', 'i1', { top: `"series":{"count":${literal}}` })), 400, 'BadRequest', int('Event', 'series.count', 32, literal));
  }
  for (const kind of ['ConfigMap', 'Secret', 'ServiceAccount', 'Namespace', 'Event']) {
    for (const field of ['generation', 'deletionGracePeriodSeconds']) {
      for (const literal of ['9223372036854775808', '1e19', '0.5']) {
        assertStatus(await send('POST', collection(kind), json(kind, 'i2', { meta: `"${field}":${literal}` })), 400, 'BadRequest', int(kind, `metadata.${field}`, 64, literal));
      }
    }
  }
  // YAML numbers reach the decoder as Go prints them.
  assertStatus(await send('POST', `${api}/events`, 'metadata: {name: i3}\ninvolvedObject: {name: x}\ncount: 1e10\n', 'yaml'), 400, 'BadRequest', int('Event', 'count', 32, '10000000000'));
  assertStatus(await send('POST', `${api}/events`, 'metadata: {name: i3}\ninvolvedObject: {name: x}\ncount: 18446744073709551616\n', 'yaml'), 400, 'BadRequest', int('Event', 'count', 32, '18446744073709552000'));
  assertStatus(await send('POST', `${api}/events`, 'metadata: {name: i3}\ninvolvedObject: {name: x}\ncount: 2.5\n', 'yaml'), 400, 'BadRequest', int('Event', 'count', 32, '2.5'));
  // The bounds themselves are fine, and an update is read the same way.
  const max = await send('POST', `${api}/events`, json('Event', 'i4', { meta: '"generation":9223372036854775807', top: '"count":2147483647,"series":{"count":-2147483648}' }));
  assert.equal(max.status, 201, max.text);
  assert.deepEqual([max.json.count, max.json.series.count], [2147483647, -2147483648]);
  assertStatus(await send('PUT', `${api}/events/i4`, json('Event', 'i4', { top: '"count":2147483648' })), 400, 'BadRequest', int('Event', 'count', 32, '2147483648'));
  assertStatus(await send('PUT', `${api}/events/i4`, 'metadata: {name: i4}\ninvolvedObject: {name: x}\ncount: 1e10\n', 'yaml'), 400, 'BadRequest', int('Event', 'count', 32, '10000000000'));
  await stillServing();
});

// ---- class 5: repeated keys in YAML ---------------------------------------------

test('repeated keys in YAML bodies: refused when Strict, a warning by default, nothing when Ignore', async () => {
  const yaml = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n  b: "2"\n  a: "3"\n`;
  const report = 'yaml: unmarshal errors:\n  line 8: key "a" already set in map';
  assertStatus(await send('POST', `${api}/configmaps?fieldValidation=Strict`, yaml('y1'), 'yaml'), 400, 'BadRequest', `strict decoding error: ${report}`);
  const warned = await send('POST', `${api}/configmaps`, yaml('y1'), 'yaml');
  assert.equal(warned.status, 201);
  assert.equal(warned.headers.warning, `299 - ${JSON.stringify(report.replace(/\n/g, ' '))}`);
  assert.deepEqual(warned.json.data, { a: '3', b: '2' });
  const ignored = await send('POST', `${api}/configmaps?fieldValidation=Ignore`, yaml('y2'), 'yaml');
  assert.equal(ignored.status, 201);
  assert.equal(ignored.headers.warning, undefined);
  // Updates, and apply patches (YAML too).
  assertStatus(await send('PUT', `${api}/configmaps/y1?fieldValidation=Strict`, yaml('y1'), 'yaml'), 400, 'BadRequest', `strict decoding error: ${report}`);
  assert.equal((await send('PUT', `${api}/configmaps/y1`, yaml('y1'), 'yaml')).headers.warning, `299 - ${JSON.stringify(report.replace(/\n/g, ' '))}`);
  const apply = (query: string) => s.client.send('PATCH', `${api}/configmaps/y3?fieldManager=m${query}`, { raw: yaml('y3'), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
  assertStatus(await apply('&fieldValidation=Strict'), 400, 'BadRequest', `strict decoding error: ${report}`);
  const applied = await apply('');
  assert.equal(applied.status, 201, applied.text);
  assert.match(String(applied.headers.warning), /key \\"a\\" already set in map/);
  await stillServing();
});

// ---- class 1, stored: an object that cannot be encoded --------------------------------

/** A protobuf watch, split into frames and decoded as an upstream client would. */
class ProtobufWatch {
  readonly events: Array<{ type: string; object: KubeObject }> = [];
  private pending = Buffer.alloc(0);
  private wake = () => {};
  constructor(private readonly res: IncomingMessage, readonly close: () => void) {
    res.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readUInt32BE(0)) {
        const frame = this.pending.subarray(4, 4 + this.pending.readUInt32BE(0));
        this.pending = this.pending.subarray(4 + frame.length);
        this.events.push(ProtobufWatch.decode(frame));
      }
      this.wake();
    });
  }

  static decode(frame: Buffer): { type: string; object: KubeObject } {
    const event = new Reader(decodeEnvelope(frame).raw);
    let type = '';
    let raw: Uint8Array = new Uint8Array(0);
    while (!event.done) {
      const { field, wireType } = event.tag();
      if (field === 1) type = event.string();
      else if (field === 2) {
        const ext = new Reader(event.bytes());
        while (!ext.done) { const t = ext.tag(); if (t.field === 1) raw = ext.bytes(); else ext.skip(t.wireType); }
      } else event.skip(wireType);
    }
    return { type, object: decodeProtobufObject(Buffer.from(raw), lookup) };
  }

  /** Waits until an event satisfies `done`, at most 5 s (a deadline, not a timing assertion). */
  async until(done: (events: ProtobufWatch['events']) => boolean): Promise<ProtobufWatch['events']> {
    const deadline = Date.now() + 5000;
    while (!done(this.events) && Date.now() < deadline && !this.res.complete) {
      await new Promise<void>((resolve) => { this.wake = resolve; setTimeout(resolve, 50); });
    }
    return this.events;
  }
}

function protobufWatch(path: string): Promise<ProtobufWatch> {
  const { ca, cert, key } = s.client.creds;
  const agent = new Agent({ ca, cert, key });
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, s.url), { agent, headers: { Accept: pbType } }, (res) => {
      assert.equal(res.statusCode, 200);
      resolve(new ProtobufWatch(res, () => { req.destroy(); agent.destroy(); }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('an object in the store that cannot be encoded: a 500 for that request, an ERROR event on a watch, and the server goes on', async () => {
  const stored = 'stored';
  const events = `/api/v1/namespaces/${stored}/events`;
  assert.equal((await s.client.post('/api/v1/namespaces', objectOf('Namespace', stored))).status, 201);
  assert.equal((await s.client.post(events, objectOf('Event', 'good-1'))).status, 201);
  const startRv = (await s.client.get(events)).json.metadata.resourceVersion;
  await s.close();
  // As a store written before times were checked: firstTimestamp "x", straight into the backend.
  const backend = openBackend({ kind: 'sqlite', dataDir });
  const bad = objectOf('Event', 'bad', { metadata: { name: 'bad', namespace: stored, uid: 'u-bad', creationTimestamp: '2024-01-01T00:00:00Z' }, firstTimestamp: 'x' });
  await backend.create(`/registry/events/${stored}/bad`, toStoredBytes(bad));
  await backend.close();
  s = await startTestServer({ storageBackend: 'sqlite', dataDir });

  for (const path of [`${events}/bad`, events, '/api/v1/events']) {
    const r = await s.client.get(path, { Accept: pbType });
    assert.equal(r.status, 500, path);
    const status = decodeProtobufObject(r.body, lookup);
    assert.deepEqual([status.kind, status.code, status.reason], ['Status', 500, 'InternalError'], path);
  }
  // JSON reads never re-encode what is stored: they still answer.
  assert.equal((await s.client.get(`${events}/bad`)).json.firstTimestamp, 'x');

  const json = await s.client.watch(`${events}?watch=1&resourceVersion=${startRv}`);
  const fromState = await protobufWatch(`${events}?watch=1`);
  const fromHistory = await protobufWatch(`${events}?watch=1&resourceVersion=${startRv}`);
  try {
    const initial = await fromState.until((e) => e.length >= 2);
    const byName = (e: { type: string; object: KubeObject }) => (e.type === 'ERROR' ? 'ERROR' : `${e.type} ${e.object.metadata?.name}`);
    assert.deepEqual(initial.map(byName).sort(), ['ADDED good-1', 'ERROR']);
    const error = initial.find((e) => e.type === 'ERROR')!.object;
    assert.deepEqual([error.kind, error.code, error.reason], ['Status', 500, 'InternalError']);
    assert.match(error.message, /unable to encode watch object Event stored\/bad: cannot encode field firstTimestamp as protobuf: parsing time "x"/);
    assert.deepEqual((await fromHistory.until((e) => e.length >= 1)).map(byName), ['ERROR'], 'the stored write replayed from history');
    // Every stream goes on: a new event reaches the protobuf watchers and a JSON watcher.
    assert.equal((await s.client.post(events, objectOf('Event', 'good-2'))).status, 201);
    assert.ok((await fromState.until((e) => e.some((x) => byName(x) === 'ADDED good-2'))).some((x) => byName(x) === 'ADDED good-2'));
    assert.ok((await fromHistory.until((e) => e.some((x) => byName(x) === 'ADDED good-2'))).some((x) => byName(x) === 'ADDED good-2'));
    const jsonEvents = await json.waitFor(2);
    assert.deepEqual(jsonEvents.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED bad', 'ADDED good-2']);
  } finally {
    fromState.close();
    fromHistory.close();
    json.close();
  }
  await stillServing();
});
