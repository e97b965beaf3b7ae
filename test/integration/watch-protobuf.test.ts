// Watch streams and lists in protobuf, read the way an upstream protobuf client
// reads them: the stream is a sequence of frames, each a 4-byte big-endian
// length and then an enveloped `WatchEvent` {type=1, object=2 RawExtension
// {raw=1}} whose raw bytes are themselves an enveloped object. The frame and
// WatchEvent layers are parsed here by hand; the envelope and the objects with
// the server's codec (decodeEnvelope, decodeProtobufObject).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { startTestServer, TestServer } from '../support/server.js';
import { builtinKinds } from '../../src/api/catalog.js';
import { builtinSchemaLookup, decodeEnvelope, decodeProtobufObject, envelopeMagic } from '../../src/api/protobuf/index.js';
import { upstreamCompat, vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
let agent: Agent;
const ns = 'pb';
const base = `/api/v1/namespaces/${ns}/configmaps`;
const lookup = builtinSchemaLookup(builtinKinds);
const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const mediaTypes = [upstreamCompat.protobufMediaType, vocabulary.protobufMediaType];

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite', etcdCompactionIntervalMs: 1500 });
  const { ca, cert, key } = s.client.creds;
  agent = new Agent({ keepAlive: true, ca, cert, key });
  assert.equal((await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
});
after(async () => {
  agent.destroy();
  await s.close();
});

// ---- the protobuf wire, by hand -------------------------------------------------

function varint(buf: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    value += (buf[i]! & 0x7f) * 2 ** shift;
    if ((buf[i]! & 0x80) === 0) return [value, i + 1];
    shift += 7;
  }
  throw new Error(`bad varint at ${at}`);
}

/** The length-delimited fields of a message, by field number (last one wins). */
function fields(buf: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let at = 0;
  while (at < buf.length) {
    const [tag, afterTag] = varint(buf, at);
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 2) {
      const [len, start] = varint(buf, afterTag);
      out.set(field, buf.subarray(start, start + len));
      at = start + len;
    } else if (wire === 0) {
      at = varint(buf, afterTag)[1];
    } else {
      throw new Error(`unexpected wire type ${wire} for field ${field}`);
    }
  }
  return out;
}

interface DecodedEvent {
  /** The envelope around the WatchEvent. */
  apiVersion: string;
  kind: string;
  type: string;
  /** The envelope around the event's object. */
  objectEnvelope: { apiVersion: string; kind: string };
  object: any;
}

function decodeFrame(frame: Buffer): DecodedEvent {
  assert.deepEqual([...frame.subarray(0, 4)], [...envelopeMagic], 'a frame starts with the envelope magic');
  const env = decodeEnvelope(frame);
  const event = fields(Buffer.from(env.raw));
  const type = event.get(1)?.toString('utf8') ?? '';
  const rawExtension = event.get(2);
  assert.ok(rawExtension, 'WatchEvent.object (field 2)');
  const raw = fields(rawExtension).get(1);
  assert.ok(raw, 'RawExtension.raw (field 1)');
  assert.deepEqual([...raw.subarray(0, 4)], [...envelopeMagic], 'the event\'s object is itself enveloped');
  const inner = decodeEnvelope(raw);
  return {
    apiVersion: env.apiVersion, kind: env.kind, type,
    objectEnvelope: { apiVersion: inner.apiVersion, kind: inner.kind },
    object: decodeProtobufObject(raw, lookup),
  };
}

/** A protobuf watch: frames are split by their 4-byte big-endian length as they arrive. */
class FrameStream {
  readonly frames: Buffer[] = [];
  ended = false;
  private pending = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  constructor(readonly res: IncomingMessage, private readonly abort: () => void) {
    res.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4) {
        const len = this.pending.readUInt32BE(0);
        if (this.pending.length < 4 + len) break;
        this.frames.push(this.pending.subarray(4, 4 + len));
        this.pending = this.pending.subarray(4 + len);
      }
      this.wake();
    });
    const finish = () => { this.ended = true; this.wake(); };
    res.on('end', finish);
    res.on('error', finish);
    res.on('close', finish);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits for `count` frames (or the end), at most `ms`; returns them decoded. */
  async events(count: number, ms = 5000): Promise<DecodedEvent[]> {
    const deadline = Date.now() + ms;
    while (this.frames.length < count && !this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return this.frames.map(decodeFrame);
  }

  /** Bytes received after the last whole frame. */
  get leftover(): number {
    return this.pending.length;
  }

  close(): void {
    this.abort();
  }
}

function openWatch(path: string, accept: string): Promise<FrameStream> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, s.url), { agent, headers: { Accept: accept } }, (res) => resolve(new FrameStream(res, () => req.destroy())));
    req.on('error', reject);
    req.end();
  });
}

// ---- tests -----------------------------------------------------------------------

for (const mediaType of mediaTypes) {
  test(`watch in ${mediaType}: length-prefixed frames of enveloped WatchEvents`, async () => {
    const first = await s.client.post(base, cm(`first-${mediaType.length}`, { a: '1' }));
    assert.equal(first.status, 201);
    const w = await openWatch(`${base}?watch=1&resourceVersion=${first.json.metadata.resourceVersion}`, mediaType);
    try {
      assert.equal(w.res.statusCode, 200);
      assert.equal(w.res.headers['content-type'], `${mediaType};stream=watch`);
      const name = `obj-${mediaType.length}`;
      const created = await s.client.post(base, cm(name, { a: '1' }));
      const updated = await s.client.put(`${base}/${name}`, { ...created.json, data: { a: '2', b: '3' } });
      assert.equal(updated.status, 200);
      const deleted = await s.client.delete(`${base}/${name}`);
      assert.equal(deleted.status, 200);
      const events = await w.events(3);
      assert.equal(events.length, 3);
      for (const e of events) {
        assert.deepEqual([e.apiVersion, e.kind], ['v1', 'WatchEvent']);
        assert.deepEqual(e.objectEnvelope, { apiVersion: 'v1', kind: 'ConfigMap' });
        assert.equal(e.object.kind, 'ConfigMap');
        assert.equal(e.object.metadata.name, name);
        assert.equal(e.object.metadata.namespace, ns);
        assert.equal(e.object.metadata.uid, created.json.metadata.uid);
      }
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
      assert.equal(events[0]!.object.metadata.resourceVersion, created.json.metadata.resourceVersion);
      assert.deepEqual(events[0]!.object.data, { a: '1' });
      assert.equal(events[1]!.object.metadata.resourceVersion, updated.json.metadata.resourceVersion);
      assert.deepEqual(events[1]!.object.data, { a: '2', b: '3' });
      assert.ok(Number(events[2]!.object.metadata.resourceVersion) > Number(updated.json.metadata.resourceVersion));
      assert.equal(w.leftover, 0, 'nothing but whole frames');
    } finally {
      w.close();
    }
    assert.equal((await s.client.delete(`${base}/first-${mediaType.length}`)).status, 200);
  });
}

test('a protobuf watch without a resourceVersion starts with the current state as ADDED frames', async () => {
  for (const n of ['s1', 's2']) assert.equal((await s.client.post(base, cm(n))).status, 201);
  const w = await openWatch(`${base}?watch=true`, upstreamCompat.protobufMediaType);
  try {
    const present = (await s.client.get(base)).json.items.length;
    const events = (await w.events(present)).filter((e) => e.object.metadata.name !== vocabulary.rootCaConfigMap);
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 's1'], ['ADDED', 's2']]);
    // And the legacy /watch/ path answers the same way.
    const legacy = await openWatch(`/api/v1/watch/namespaces/${ns}/configmaps?fieldSelector=metadata.name%3Ds2`, vocabulary.protobufMediaType);
    try {
      assert.equal(legacy.res.headers['content-type'], `${vocabulary.protobufMediaType};stream=watch`);
      const one = await legacy.events(1);
      assert.deepEqual(one.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 's2']]);
    } finally {
      legacy.close();
    }
  } finally {
    w.close();
  }
  for (const n of ['s1', 's2']) assert.equal((await s.client.delete(`${base}/${n}`)).status, 200);
});

test('the legacy watch path of one object watches that object', async () => {
  assert.equal((await s.client.post(base, cm('single'))).status, 201);
  const w = await openWatch(`/api/v1/watch/namespaces/${ns}/configmaps/single`, vocabulary.protobufMediaType);
  try {
    assert.equal(w.res.statusCode, 200);
    assert.equal(w.res.headers['content-type'], `${vocabulary.protobufMediaType};stream=watch`);
    const one = await w.events(1);
    assert.deepEqual(one.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'single']]);
  } finally {
    w.close();
    await s.client.delete(`${base}/single`);
  }
});

test('a protobuf watch that times out ends with a BOOKMARK frame', async () => {
  const list = await s.client.get(base);
  const w = await openWatch(`${base}?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=${list.json.metadata.resourceVersion}`,
    upstreamCompat.protobufMediaType);
  const events = await w.events(Number.MAX_SAFE_INTEGER, 5000);
  assert.equal(w.ended, true, 'the stream ended by itself');
  const bookmark = events.at(-1)!;
  assert.equal(bookmark.type, 'BOOKMARK');
  assert.deepEqual(bookmark.objectEnvelope, { apiVersion: 'v1', kind: 'ConfigMap' });
  assert.ok(Number(bookmark.object.metadata.resourceVersion) >= Number(list.json.metadata.resourceVersion));
  assert.equal(bookmark.object.metadata.name, undefined);
  assert.equal(w.leftover, 0);
});

test('a protobuf watch from a compacted resourceVersion gets an ERROR frame holding a 410 Status', async () => {
  const old = await s.client.post(base, cm('old'));
  const deadline = Date.now() + 20_000;
  let events: DecodedEvent[] = [];
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await s.client.post(base, cm(`tick-${Date.now()}`))).status, 201);
    const w = await openWatch(`${base}?watch=1&resourceVersion=${old.json.metadata.resourceVersion}`, vocabulary.protobufMediaType);
    events = await w.events(1, 2000);
    w.close();
    if (events[0]?.type === 'ERROR') break;
  }
  const e = events[0];
  assert.equal(e?.type, 'ERROR', 'history older than 1.5 s is compacted');
  assert.equal(e.objectEnvelope.kind, 'Status');
  assert.equal(e.object.code, 410);
  assert.equal(e.object.reason, 'Expired');
  assert.match(e.object.message, /too old resource version/);
});

test('protobuf lists of built-in kinds decode to their List kinds', async () => {
  for (const mediaType of mediaTypes) {
    const r = await s.client.get(base, { Accept: mediaType });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], mediaType, 'no stream parameter on a list');
    assert.deepEqual([...r.body.subarray(0, 4)], [...envelopeMagic]);
    const env = decodeEnvelope(r.body);
    assert.deepEqual([env.apiVersion, env.kind], ['v1', 'ConfigMapList']);
    const list = decodeProtobufObject(r.body, lookup);
    const json = await s.client.get(base);
    assert.equal(list.metadata!.resourceVersion, json.json.metadata.resourceVersion);
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), json.json.items.map((i: any) => i.metadata.name));
    assert.deepEqual(list.items.map((i: any) => i.metadata.resourceVersion), json.json.items.map((i: any) => i.metadata.resourceVersion));
  }
  // A cluster-scoped kind, a page of it, and protobuf picked from a list of acceptable types.
  const r = await s.client.get('/api/v1/namespaces?limit=2', { Accept: `application/json;q=0.5, ${upstreamCompat.protobufMediaType}` });
  assert.equal(r.headers['content-type'], upstreamCompat.protobufMediaType);
  const page = decodeProtobufObject(r.body, lookup);
  assert.equal(page.kind, 'NamespaceList');
  assert.equal(page.items.length, 2);
  assert.ok(page.metadata!.continue, 'a continue token in the ListMeta');
  for (const item of page.items) assert.equal(typeof item.metadata.name, 'string');
  const next = await s.client.get(`/api/v1/namespaces?limit=2&continue=${encodeURIComponent(page.metadata!.continue)}`, { Accept: upstreamCompat.protobufMediaType });
  assert.equal(next.status, 200);
  assert.equal(decodeProtobufObject(next.body, lookup).kind, 'NamespaceList');
});
