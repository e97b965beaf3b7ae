// A watch stream whose object cannot be encoded: the failure is logged once
// (the encoding, failed or not, is shared by every watcher of the event), an
// ERROR event with a 500 Status goes out in its place, and the stream goes on.
// The store, the response and the logger are stand-ins that record.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { serveWatch } from '../../../src/server/handlers/watch.js';
import { events } from '../../../src/api/core/v1/index.js';
import { CacheEvent, CachedKeyValue } from '../../../src/storage/cache/types.js';
import type { ObjectEvent, WatchSink } from '../../../src/registry/watch.js';
import type { ResourceStore } from '../../../src/registry/store.js';
import { builtinSchemaLookup, decodeEnvelope, decodeProtobufObject } from '../../../src/api/protobuf/index.js';
import { Reader } from '../../../src/machinery/protobufwire.js';
import { StoredObject, toStoredBytes } from '../../../src/registry/objects.js';
import { upstreamCompat } from '../../../src/machinery/vocabulary.js';
import type { Representation } from '../../../src/server/representation.js';

const lookup = builtinSchemaLookup([events]);
const protobuf: Representation = { format: 'protobuf', view: 'object', viewApiVersion: '', contentType: upstreamCompat.protobufMediaType };

class FakeResponse extends EventEmitter {
  readonly chunks: Buffer[] = [];
  ended = false;
  writeHead() { return this; }
  flushHeaders() {}
  write(chunk: Buffer) { this.chunks.push(chunk); return true; }
  end() { this.ended = true; }

  /** The stream's frames as (type, object). */
  frames(): Array<{ type: string; object: Record<string, any> }> {
    const all = Buffer.concat(this.chunks);
    const out = [];
    for (let at = 0; at < all.length;) {
      const len = all.readUInt32BE(at);
      const event = new Reader(decodeEnvelope(all.subarray(at + 4, at + 4 + len)).raw);
      at += 4 + len;
      let type = '';
      let raw: Uint8Array = new Uint8Array(0);
      while (!event.done) {
        const { field, wireType } = event.tag();
        if (field === 1) type = event.string();
        else if (field === 2) { const ext = new Reader(event.bytes()); ext.tag(); raw = ext.bytes(); } else event.skip(wireType);
      }
      out.push({ type, object: decodeProtobufObject(Buffer.from(raw), lookup) });
    }
    return out;
  }
}

function fakeStore(): { store: ResourceStore; sinks: WatchSink[] } {
  const sinks: WatchSink[] = [];
  const store = {
    kind: events,
    async watch(_ns: unknown, _opts: unknown, sink: WatchSink) {
      sinks.push(sink);
      return { stop() {}, pause() {}, resume() {}, bookmarkRevision: () => 1 };
    },
  } as unknown as ResourceStore;
  return { store, sinks };
}

function eventOf(name: string, revision: number, extra: Record<string, unknown> = {}): ObjectEvent {
  const obj = { apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'ns' }, involvedObject: { name: 'x' }, ...extra };
  const kv = new CachedKeyValue(`/registry/events/ns/${name}`, toStoredBytes(obj), revision, revision);
  return { type: 'ADDED', object: new StoredObject(kv), source: new CacheEvent('put', kv, undefined, revision) };
}

test('an object that cannot be encoded becomes one logged ERROR event shared by every watcher, and the streams go on', async () => {
  const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const log = { error: (fields: Record<string, unknown>, message: string) => logged.push({ fields, message }) } as unknown as Logger;
  const { store, sinks } = fakeStore();
  const responses = [new FakeResponse(), new FakeResponse()];
  for (const res of responses) {
    await serveWatch(store, res as unknown as ServerResponse, protobuf, { list: {}, allowBookmarks: false, timeoutSeconds: 60, include: 'Metadata', log });
  }
  const bad = eventOf('bad', 2, { firstTimestamp: 'x' });
  const good = eventOf('good', 3);
  for (const sink of sinks) assert.doesNotThrow(() => sink.onEvents([bad, good]));

  assert.equal(logged.length, 1, 'logged once, not once per watcher');
  assert.equal(logged[0]!.message, 'unable to encode watch event');
  assert.deepEqual([logged[0]!.fields.kind, logged[0]!.fields.object], ['Event', 'ns/bad']);
  for (const res of responses) {
    const frames = res.frames();
    assert.deepEqual(frames.map((f) => f.type), ['ERROR', 'ADDED']);
    assert.deepEqual([frames[0]!.object.kind, frames[0]!.object.code, frames[0]!.object.reason], ['Status', 500, 'InternalError']);
    assert.match(frames[0]!.object.message, /^Internal error occurred: unable to encode watch object Event ns\/bad: cannot encode field firstTimestamp as protobuf: parsing time "x"/);
    assert.equal(frames[1]!.object.metadata.name, 'good');
    assert.equal(res.ended, false, 'the stream goes on');
    res.emit('close');
  }
});
