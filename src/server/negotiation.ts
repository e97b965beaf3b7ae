// Reading request bodies and writing responses: size limit, JSON and YAML
// decoding, Accept negotiation, Warning headers, Status errors.

import type { IncomingMessage, ServerResponse } from 'node:http';
import YAML from 'yaml';
import { ApiError, errors } from '../machinery/errors.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { decodeProtobufObject, isProtobufMediaType, type SchemaLookup } from './protobuf/index.js';

/** Request bodies above this are refused with 413, as upstream. */
export const maxRequestBodyBytes = 3 * 1024 * 1024;

export type ResponseFormat = 'json' | 'yaml';

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

export function parseMediaType(value: string): MediaRange {
  const [essence, ...paramParts] = value.split(';');
  const [type = '', subtype = ''] = essence.trim().toLowerCase().split('/');
  const params: Record<string, string> = {};
  for (const p of paramParts) {
    const eq = p.indexOf('=');
    if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
  }
  const q = params.q !== undefined ? Number(params.q) : 1;
  delete params.q;
  return { type, subtype, params, q: Number.isFinite(q) ? q : 0 };
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  return header.split(',').map(parseMediaType).filter((m) => m.q > 0 && m.type)
    .map((m, i) => ({ m, i })).sort((a, b) => b.m.q - a.m.q || a.i - b.i).map((x) => x.m);
}

const served = ['application/json', 'application/yaml'];

/** Picks the response format for an object response; 406 when nothing acceptable is offered. */
export function negotiateFormat(accept: string | undefined): ResponseFormat {
  for (const m of parseAccept(accept)) {
    // Tables and metadata-only views come with a later capability; skip such ranges.
    if (m.params.as) continue;
    if ((m.type === '*' && m.subtype === '*') || (m.type === 'application' && (m.subtype === '*' || m.subtype === 'json'))) return 'json';
    if (m.type === 'application' && m.subtype === 'yaml') return 'yaml';
  }
  throw errors.notAcceptable(served);
}

export async function readBody(req: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume(); // drain so the connection can answer
    throw errors.requestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw errors.requestEntityTooLarge(limit);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf';

/** Content types accepted for object bodies (patches have their own). */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  if (!contentType) return 'json';
  if (isProtobufMediaType(contentType)) return 'protobuf';
  const m = parseMediaType(contentType);
  const essence = `${m.type}/${m.subtype}`;
  if (essence === 'application/json' || essence === '*/*') return 'json';
  if (essence === 'application/yaml' || essence === 'application/x-yaml' || essence === 'text/yaml') return 'yaml';
  throw errors.unsupportedMediaType(contentType, [...served, vocabulary.protobufMediaType]);
}

/**
 * Parses a body; malformed input is a 400 naming what was wrong. Protobuf
 * needs the schemas of the kinds that may arrive (built-in kinds only).
 */
export function decodeBody(body: Buffer, format: BodyFormat, protobufSchemas?: SchemaLookup): unknown {
  if (format === 'protobuf') {
    if (!protobufSchemas) throw errors.unsupportedMediaType(vocabulary.protobufMediaType, served);
    return decodeProtobufObject(body, protobufSchemas);
  }
  const text = body.toString('utf8');
  if (format === 'yaml') {
    try {
      const docs = YAML.parseAllDocuments(text, { schema: 'core', uniqueKeys: false, intAsBigInt: false });
      if (docs.length !== 1) throw new Error(docs.length === 0 ? 'empty document' : 'expected one YAML document');
      const doc = docs[0];
      if (doc.errors.length) throw doc.errors[0];
      return doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw errors.badRequest(`the object provided is unrecognized: error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (text.trim() === '') throw errors.badRequest('the object provided is unrecognized: empty body');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

export interface WriteOptions {
  format?: ResponseFormat;
  pretty?: boolean;
  warnings?: string[];
  headers?: Record<string, string>;
}

/** Warning header values in RFC 7234 form: 299 - "text". */
export function warningHeader(texts: string[]): string[] {
  return [...new Set(texts)].map((t) => `299 - ${JSON.stringify(t.replace(/[\r\n]+/g, ' '))}`);
}

export function encode(obj: unknown, format: ResponseFormat, pretty: boolean): { body: Buffer; contentType: string } {
  if (format === 'yaml') return { body: Buffer.from(YAML.stringify(obj)), contentType: 'application/yaml' };
  return { body: Buffer.from(pretty ? JSON.stringify(obj, null, 2) + '\n' : JSON.stringify(obj)), contentType: 'application/json' };
}

export function writeObject(res: ServerResponse, code: number, obj: unknown, opts: WriteOptions = {}): void {
  const { body, contentType } = encode(obj, opts.format ?? 'json', opts.pretty ?? false);
  writeBytes(res, code, body, contentType, opts);
}

export function writeBytes(res: ServerResponse, code: number, body: Buffer, contentType: string, opts: WriteOptions = {}): void {
  if (res.headersSent) return;
  const headers: Record<string, string | string[] | number> = {
    'Content-Type': contentType,
    'Content-Length': body.length,
    'Cache-Control': 'no-cache, private',
    ...opts.headers,
  };
  if (opts.warnings?.length) headers.Warning = warningHeader(opts.warnings);
  res.writeHead(code, headers);
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

export function writeError(res: ServerResponse, err: ApiError, opts: WriteOptions = {}): void {
  writeObject(res, err.code, err.toStatus(), { ...opts, headers: { ...opts.headers, ...err.headers } });
}
