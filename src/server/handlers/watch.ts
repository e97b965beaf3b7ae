// Watch streams: chunked JSON lines ({"type","object"} per event) or
// length-prefixed protobuf frames, flushed as events happen. Each event's
// encoding is kept on the cache event, so N watchers share one encoding.

import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../machinery/errors.js';
import { Status, WatchEvent } from '../../api/meta/v1.js';
import { apiVersionOf, type KindDefinition, type KubeObject } from '../../api/kind.js';
import type { ListOptions } from '../../registry/store.js';
import type { ActiveWatch, ObjectEvent, WatchSink } from '../../registry/watch.js';
import { encodeEnvelope, encodeMessage, encodeProtobufObject } from '../../api/protobuf/index.js';
import { IncludeObject, Representation, toTable } from '../representation.js';
import type { UpstreamName } from '../../api/codec.js';
import type { VersionCodec } from '../../api/codec.js';

/** What a watch stream reads from: a kind's events, by namespace. */
export interface WatchSource {
  /** The kind at the version the client watches. */
  kind: KindDefinition;
  /** Converts the stored objects of the events when the client watches another version. */
  codec?: VersionCodec;
  watch(namespace: string | undefined, opts: ListOptions, sink: WatchSink): Promise<ActiveWatch>;
}

export interface WatchParams {
  namespace?: string;
  list: ListOptions;
  allowBookmarks: boolean;
  /** End the stream cleanly after this many seconds. */
  timeoutSeconds?: number;
  include: IncludeObject;
  /** A typed upstream client that named the group by its upstream name: objects go out in its version. */
  client?: UpstreamName;
  /** Where failures after the stream began are reported (the response can no longer carry them). */
  log?: Logger;
  hooks?: WatchHooks;
}

/** The server's view of open streams: metrics count them and their events; shutdown ends them cleanly. */
export interface WatchHooks {
  opened(kind: KindDefinition, end: () => void): { sent(n: number): void; closed(): void };
}

/** How often a watch that allows bookmarks gets one. */
export const bookmarkIntervalMs = 10_000;
/** Without timeoutSeconds a watch lasts 30 to 60 minutes, as upstream spreads them. */
const defaultTimeoutMs = () => (30 + Math.random() * 30) * 60_000;

type Frame = Buffer;

/** namespace/name of an event's object, for messages; the object may be the very thing that is broken. */
function describe(e: ObjectEvent): string {
  try {
    const meta = e.object.object.metadata ?? {};
    return meta.namespace ? `${meta.namespace}/${meta.name}` : String(meta.name);
  } catch {
    return 'object';
  }
}

class WatchEncoder {
  /** The apiVersion objects and bookmarks go out in. */
  private readonly apiVersion: string;
  /** Stored objects already converted to the served version (by a conversion webhook, one review per event). */
  readonly converted = new WeakMap<KubeObject, KubeObject>();

  constructor(
    private readonly store: WatchSource,
    private readonly rep: Representation,
    private readonly include: IncludeObject,
    private readonly client?: UpstreamName,
    private readonly log?: Logger,
  ) {
    this.apiVersion = client?.theirs ?? apiVersionOf(store.kind);
  }

  private frameOf(type: string, object: KubeObject | Buffer): Frame {
    const kind = this.store.kind;
    if (this.rep.format === 'protobuf') {
      const raw = Buffer.isBuffer(object) ? object : encodeProtobufObject(object, object.kind === 'Status' ? Status : kind.schema);
      const event = encodeEnvelope(apiVersionOf(kind), 'WatchEvent', encodeMessage({ type, object: raw }, WatchEvent));
      const length = Buffer.alloc(4);
      length.writeUInt32BE(event.length);
      return Buffer.concat([length, event]);
    }
    const json = Buffer.isBuffer(object) ? object : Buffer.from(JSON.stringify(object));
    return Buffer.concat([Buffer.from(`{"type":"${type}","object":`), json, Buffer.from('}\n')]);
  }

  private servedObject(obj: KubeObject, codec: VersionCodec): KubeObject {
    return this.converted.get(obj) ?? codec.fromStored(obj);
  }

  private encodeUncached(e: ObjectEvent): Frame {
    if (this.rep.view === 'Table') {
      const obj = this.store.codec ? this.servedObject(e.object.object, this.store.codec) : e.object.object;
      return this.frameOf(e.type, toTable(obj, this.store.kind, this.rep.viewApiVersion, this.include));
    }
    if (this.rep.view === 'PartialObjectMetadata') {
      return this.frameOf(e.type, { kind: 'PartialObjectMetadata', apiVersion: this.rep.viewApiVersion, metadata: e.object.object.metadata });
    }
    if (this.client || this.store.codec) {
      const served = this.store.codec ? this.servedObject(e.object.object, this.store.codec) : e.object.object;
      const theirs = this.client ? this.client.answerAsTheirs(served) : served;
      return this.frameOf(e.type, this.rep.format === 'protobuf' ? encodeProtobufObject(theirs, this.store.kind.schema) : theirs);
    }
    if (this.rep.format === 'protobuf') return this.frameOf(e.type, encodeProtobufObject(e.object.object, this.store.kind.schema));
    return this.frameOf(e.type, e.object.json());
  }

  /**
   * An object that cannot be encoded (a stored value its schema cannot
   * carry, written before the value was checked) must not end the process
   * or the other watchers' streams: it is logged and an ERROR event with a
   * 500 Status goes out in its place, and the stream goes on.
   */
  private encodeOrError(e: ObjectEvent): Frame {
    try {
      return this.encodeUncached(e);
    } catch (err) {
      const kind = this.store.kind.kind;
      const what = describe(e);
      this.log?.error({ err, kind, object: what, format: this.rep.format }, 'unable to encode watch event');
      return this.error(errors.internal(`unable to encode watch object ${kind} ${what}: ${(err as Error)?.message ?? String(err)}`));
    }
  }

  event(e: ObjectEvent): Frame {
    // Tables carry ages that depend on the moment: not shared.
    if (!e.source || this.rep.view === 'Table') return this.encodeOrError(e);
    const key = `watch:${this.rep.format}:${this.rep.view}:${this.rep.viewApiVersion}:${this.apiVersion}:${e.type}`;
    let frame = e.source.memo.get(key) as Frame | undefined;
    if (!frame) {
      // A failure is kept too: every watcher gets the same ERROR frame, and it is logged once.
      frame = this.encodeOrError(e);
      e.source.memo.set(key, frame, frame.length + 64);
    }
    return frame;
  }

  bookmark(revision: number): Frame {
    const kind = this.store.kind;
    return this.frameOf('BOOKMARK', { kind: kind.kind, apiVersion: this.apiVersion, metadata: { resourceVersion: String(revision) } });
  }

  error(err: ApiError): Frame {
    return this.frameOf('ERROR', err.toStatus() as unknown as KubeObject);
  }
}

export async function serveWatch(store: WatchSource, res: ServerResponse, rep: Representation, params: WatchParams): Promise<void> {
  const encoder = new WatchEncoder(store, rep, params.include, params.client, params.log);
  let watch: ActiveWatch | undefined;
  let ended = false;
  let timeout: NodeJS.Timeout | undefined;
  let bookmarkTimer: NodeJS.Timeout | undefined;
  let endAfterHeaders = false;
  let tracked: ReturnType<WatchHooks['opened']> | undefined;

  const end = (final?: Frame) => {
    if (ended) return;
    if (early) { early.push(...(final ? [final] : [])); endAfterHeaders = true; return; }
    ended = true;
    tracked?.closed();
    clearTimeout(timeout);
    clearTimeout(bookmarkTimer);
    watch?.stop();
    if (final) res.write(final);
    res.end();
  };
  // Frames produced before the headers go out (the initial state) wait here.
  let early: Frame[] | undefined = [];
  const write = (frame: Frame) => {
    if (ended) return;
    if (early) { early.push(frame); return; }
    if (!res.write(frame)) watch?.pause(); // resumed on 'drain'
  };

  const deliver = (events: ObjectEvent[]) => {
    try {
      for (const e of events) write(encoder.event(e));
      tracked?.sent(events.length);
    } catch (err) {
      params.log?.error({ err, kind: store.kind.kind }, 'watch stream failed');
      end(encoder.error(errors.internal('the watch stream could not continue')));
    }
  };
  // A version converted later (a conversion webhook): one review per event, events kept in order; a failed one ends the stream with its 500.
  const codec = store.codec;
  let converting: Promise<void> | undefined = codec?.convertsLater ? Promise.resolve() : undefined;
  const convertThenDeliver = async (events: ObjectEvent[]) => {
    if (ended) return;
    try {
      for (const e of events) encoder.converted.set(e.object.object, (await codec!.fromStoredAll([e.object.object]))[0]!);
    } catch (err) {
      end(encoder.error(err instanceof ApiError ? err : errors.internal(String(err))));
      return;
    }
    deliver(events);
  };
  // Errors before the stream starts (bad selectors, 504 for future versions) answer as normal Status responses.
  // The sink runs in the watch cache's callbacks, outside this request: nothing may escape it.
  watch = await store.watch(params.namespace, params.list, {
    onEvents: (events) => {
      if (converting) {
        converting = converting.then(() => convertThenDeliver(events));
        return;
      }
      deliver(events);
    },
    onEnd: (err) => end(encoder.error(err.code === 410 ? err : errors.gone(err.message))),
  });
  const contentType = rep.format === 'protobuf' ? `${rep.contentType};stream=watch` : rep.contentType;
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const queued = early;
  early = undefined;
  tracked = params.hooks?.opened(store.kind, () => end());
  for (const frame of queued) write(frame);
  if (endAfterHeaders) return end();
  res.on('drain', () => watch?.resume());
  res.on('close', () => end());

  const timeoutMs = params.timeoutSeconds !== undefined ? params.timeoutSeconds * 1000 : defaultTimeoutMs();
  // A bookmark also goes out just before a timed-out stream ends, so the client can resume from it.
  timeout = setTimeout(() => end(params.allowBookmarks ? encoder.bookmark(watch!.bookmarkRevision()) : undefined), timeoutMs);
  if (params.allowBookmarks) {
    const tick = () => {
      write(encoder.bookmark(watch!.bookmarkRevision()));
      bookmarkTimer = setTimeout(tick, bookmarkIntervalMs).unref();
    };
    bookmarkTimer = setTimeout(tick, bookmarkIntervalMs).unref();
  }
}
