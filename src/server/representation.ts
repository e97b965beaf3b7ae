// What a response looks like: the wire format (JSON, YAML, protobuf) and the
// view (the object itself, a Table, or PartialObjectMetadata), negotiated
// from Accept, then rendering and encoding an answer in it.

import type { ServerResponse } from 'node:http';
import YAML from 'yaml';
import { ApiError, errors } from '../machinery/errors.js';
import { upstreamCompat, vocabulary } from '../machinery/vocabulary.js';
import { ageOf } from '../machinery/time.js';
import { Status } from '../api/meta/v1.js';
import type { KindDefinition, KubeObject, PrinterColumn } from '../api/kind.js';
import { encodeProtobufObject, isProtobufMediaType } from '../api/protobuf/index.js';
import { encodedWithVersionParts, encodeListJsonParts, materializeList, storedFormOf, StoredList, StoredObject } from '../registry/objects.js';
import { parseAccept, warningHeader } from './negotiation.js';

export type WireFormat = 'json' | 'yaml' | 'protobuf';
export type View = 'object' | 'Table' | 'PartialObjectMetadata';

export interface Representation {
  format: WireFormat;
  view: View;
  /** apiVersion of a Table or PartialObjectMetadata answer: our meta group or upstream's, as asked. */
  viewApiVersion: string;
  contentType: string;
}

export interface NegotiateOptions {
  /** Protobuf is offered for built-in kinds only. */
  protobuf: boolean;
  /** Table and PartialObjectMetadata are offered on resource reads. */
  views: boolean;
  /** A watch stream: YAML has no streaming form, so it is not offered. */
  stream?: boolean;
}

const metaGroups: readonly string[] = [vocabulary.metaGroup, upstreamCompat.metaGroup];

export const plainJson: Representation = { format: 'json', view: 'object', viewApiVersion: '', contentType: 'application/json' };

export function negotiate(accept: string | undefined, opts: NegotiateOptions): Representation {
  const offered = opts.stream ? ['application/json'] : ['application/json', 'application/yaml'];
  if (opts.protobuf) offered.push(vocabulary.protobufMediaType);
  if (opts.views) offered.push(`application/json;as=Table;v=v1;g=${vocabulary.metaGroup}`);
  for (const m of parseAccept(accept)) {
    const essence = `${m.type}/${m.subtype}`;
    if (m.params.as) {
      if (!opts.views || m.subtype !== 'json' || !metaGroups.includes(m.params.g) || m.params.v !== 'v1') continue;
      const view: View | undefined = m.params.as === 'Table' ? 'Table'
        : m.params.as === 'PartialObjectMetadata' || m.params.as === 'PartialObjectMetadataList' ? 'PartialObjectMetadata' : undefined;
      if (!view) continue;
      return { format: 'json', view, viewApiVersion: `${m.params.g}/v1`, contentType: `application/json;as=${m.params.as};v=v1;g=${m.params.g}` };
    }
    if (isProtobufMediaType(essence)) {
      if (opts.protobuf) return { format: 'protobuf', view: 'object', viewApiVersion: '', contentType: essence };
      continue;
    }
    if (essence === '*/*' || essence === 'application/*' || essence === 'application/json') return plainJson;
    if (essence === 'application/yaml' && !opts.stream) return { ...plainJson, format: 'yaml', contentType: 'application/yaml' };
  }
  throw errors.notAcceptable(offered);
}

// ---- views -----------------------------------------------------------------

const defaultColumns: PrinterColumn[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name of the object; unique within its namespace.', value: (o) => o.metadata?.name },
  { name: 'Created At', type: 'date', description: 'When the object was created.', value: (o) => o.metadata?.creationTimestamp },
];

function isList(obj: KubeObject): boolean {
  return Array.isArray(obj.items);
}

function partial(obj: KubeObject, apiVersion: string): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata ?? {} };
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(v: string | null): IncludeObject {
  if (v === null || v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw errors.badRequest(`includeObject: Unsupported value: "${v}": supported values: "None", "Metadata", "Object"`);
}

export function toTable(result: KubeObject, kind: KindDefinition, apiVersion: string, include: IncludeObject, now = Date.now()): KubeObject {
  const columns = kind.printerColumns.length ? kind.printerColumns : defaultColumns;
  const items: KubeObject[] = isList(result) ? result.items : [result];
  const rows = items.map((item) => {
    const row: Record<string, unknown> = {
      cells: columns.map((c) => {
        const v = c.value(item);
        return v === undefined || v === null ? (c.name === 'Age' ? ageOf(undefined, now) : '') : v;
      }),
    };
    if (include === 'Metadata') row.object = partial(item, apiVersion);
    else if (include === 'Object') row.object = item;
    return row;
  });
  const metadata: Record<string, unknown> = {};
  const src = result.metadata ?? {};
  if (isList(result)) {
    for (const k of ['resourceVersion', 'continue', 'remainingItemCount']) if (src[k] !== undefined) metadata[k] = src[k];
  } else if (src.resourceVersion !== undefined) {
    metadata.resourceVersion = src.resourceVersion;
  }
  return {
    kind: 'Table',
    apiVersion,
    metadata,
    columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 })),
    rows,
  };
}

export function toPartialObjectMetadata(result: KubeObject, apiVersion: string): KubeObject {
  if (!isList(result)) return partial(result, apiVersion);
  return { kind: 'PartialObjectMetadataList', apiVersion, metadata: result.metadata ?? {}, items: result.items.map((i: KubeObject) => partial(i, apiVersion)) };
}

// ---- encoding --------------------------------------------------------------

export interface RespondOptions {
  pretty?: boolean;
  warnings?: string[];
  headers?: Record<string, string>;
  /** The kind whose schema encodes protobuf answers (absent: only Status can be protobuf). */
  kind?: KindDefinition;
}

/** Encodes a value in a wire format; protobuf needs the kind (or a Status). */
export function encodeIn(obj: KubeObject, format: WireFormat, opts: RespondOptions): Buffer {
  if (format === 'yaml') return Buffer.from(YAML.stringify(obj));
  if (format === 'protobuf') {
    if (obj.kind === 'Status') return encodeProtobufObject(obj, Status);
    if (!opts.kind) throw errors.internal('no protobuf schema for this answer');
    return encodeProtobufObject(obj, opts.kind.schema);
  }
  // As upstream's JSON encoder, every JSON body ends with a newline (clients compare error texts whole).
  return Buffer.from(opts.pretty ? JSON.stringify(obj, null, 2) + '\n' : JSON.stringify(obj) + '\n');
}

/** The newline upstream's JSON encoder ends a body with, after the pieces of a JSON answer. */
const endOfJson = Buffer.from('\n');

export function sendBytes(res: ServerResponse, code: number, body: Buffer | Buffer[], contentType: string, opts: RespondOptions = {}): void {
  if (res.headersSent) return;
  const parts = Array.isArray(body) ? body : [body];
  const headers: Record<string, string | string[] | number> = {
    'Content-Type': contentType,
    'Content-Length': parts.reduce((n, p) => n + p.length, 0),
    'Cache-Control': 'no-cache, private',
    ...opts.headers,
  };
  // After any warning set earlier on the response (a deprecated version's), not in its place.
  if (opts.warnings?.length) headers.Warning = [...headerList(res.getHeader('Warning')), ...warningHeader(opts.warnings)];
  res.writeHead(code, headers);
  if (res.req?.method === 'HEAD') { res.end(); return; }
  if (parts.length === 1) { res.end(parts[0]); return; }
  // Many small pieces are joined into chunks of about 64 KiB: few writes, and
  // no copy of the whole body. A chunk is made when the socket takes more, so
  // a list of hundreds of megabytes starts going out at once and is never
  // held twice (as pieces and as queued chunks) while the client reads it.
  let next = 0;
  const pump = (): void => {
    while (next < parts.length) {
      const start = next;
      let bytes = 0;
      while (next < parts.length && bytes < writeChunkBytes) bytes += parts[next++]!.length;
      const chunk = Buffer.concat(parts.slice(start, next), bytes);
      if (next === parts.length) { res.end(chunk); return; }
      // Up to about a megabyte is queued per turn of the event loop: a long
      // answer then moves at the socket's pace even while other work (the
      // controllers' first lists after a restart) takes its turns.
      if (!res.write(chunk) && res.writableLength >= queuedAnswerBytes) { res.once('drain', pump); return; }
    }
  };
  pump();
}

const writeChunkBytes = 64 * 1024;
const queuedAnswerBytes = 1024 * 1024;

function headerList(value: number | string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [String(value)];
}

/** Sends an object in the negotiated representation. Views apply to resource answers, not to Status. */
export function respond(res: ServerResponse, code: number, obj: KubeObject, rep: Representation, opts: RespondOptions & { include?: IncludeObject } = {}): void {
  let out = obj;
  let contentType = rep.contentType;
  if (obj.kind === 'Status' || rep.view === 'object') {
    // An object a write just stored goes out as the bytes stored, not encoded again.
    const stored = rep.format === 'json' && rep.view === 'object' && !opts.pretty ? storedFormOf(obj) : undefined;
    if (stored) return sendBytes(res, code, [...encodedWithVersionParts(stored), endOfJson], contentType, opts);
    if (rep.view !== 'object') contentType = 'application/json';
  } else if (rep.view === 'Table') {
    out = toTable(obj, opts.kind!, rep.viewApiVersion, opts.include ?? 'Metadata');
  } else {
    out = toPartialObjectMetadata(obj, rep.viewApiVersion);
    contentType = `application/json;as=${out.kind};v=v1;g=${rep.viewApiVersion.split('/')[0]}`;
  }
  sendBytes(res, code, encodeIn(out, rep.format, opts), contentType, opts);
}

export function respondError(res: ServerResponse, err: ApiError, rep: Representation = plainJson, opts: RespondOptions = {}): void {
  respond(res, err.code, err.toStatus() as unknown as KubeObject, rep.view === 'object' ? rep : plainJson, { ...opts, headers: { ...opts.headers, ...err.headers } });
}

/**
 * Sends what the store read. Plain JSON is built from the stored bytes
 * without parsing them; every other form goes through the object.
 */
export function respondStored(res: ServerResponse, code: number, value: StoredObject | StoredList, rep: Representation, opts: RespondOptions & { include?: IncludeObject } = {}): void {
  if (rep.format === 'json' && rep.view === 'object' && !opts.pretty) {
    const body = value instanceof StoredObject ? value.jsonParts() : encodeListJsonParts(value);
    sendBytes(res, code, [...body, endOfJson], rep.contentType, opts);
    return;
  }
  respond(res, code, value instanceof StoredObject ? value.object : materializeList(value), rep, opts);
}
