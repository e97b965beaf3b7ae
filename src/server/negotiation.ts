// Reading requests: body size limit, JSON, YAML and protobuf decoding, media
// type and Accept parsing. Answers are written by representation.ts.

import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import { errors } from '../machinery/errors.js';
import { maxRequestBodyBytes } from '../machinery/limits.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { decodeProtobufObject, isProtobufMediaType, type SchemaLookup } from './protobuf/index.js';

// Request bodies above this are refused with 413, as upstream; machinery's
// JSON patch bounds its copies by the same number, so it lives there.
export { maxRequestBodyBytes };

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

/** Media ranges of an Accept header, most preferred first (q, then order). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  return header.split(',').map(parseMediaType).filter((m) => m.q > 0 && m.type)
    .map((m, i) => ({ m, i })).sort((a, b) => b.m.q - a.m.q || a.i - b.i).map((x) => x.m);
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

const bodyMediaTypes = ['application/json', 'application/yaml', vocabulary.protobufMediaType];

/** Content types accepted for object bodies (patches have their own). */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  if (!contentType) return 'json';
  if (isProtobufMediaType(contentType)) return 'protobuf';
  const m = parseMediaType(contentType);
  const essence = `${m.type}/${m.subtype}`;
  if (essence === 'application/json' || essence === '*/*') return 'json';
  if (essence === 'application/yaml' || essence === 'application/x-yaml' || essence === 'text/yaml') return 'yaml';
  throw errors.unsupportedMediaType(contentType, bodyMediaTypes);
}

/** Parses YAML text (one document) to JSON values; malformed input is a 400. */
export function parseYaml(text: string): unknown {
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

/** Parses JSON text; malformed input is a 400 naming what was wrong. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') throw errors.badRequest('the object provided is unrecognized: empty body');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

/**
 * Parses a body in its format. Protobuf needs the schemas of the kinds that
 * may arrive (built-in kinds only); without them it is a 415.
 */
export function decodeBody(body: Buffer, format: BodyFormat, protobufSchemas?: SchemaLookup): unknown {
  if (format === 'protobuf') {
    if (!protobufSchemas) throw errors.unsupportedMediaType(vocabulary.protobufMediaType, bodyMediaTypes.slice(0, 2));
    return decodeProtobufObject(body, protobufSchemas);
  }
  const text = body.toString('utf8');
  return format === 'yaml' ? parseYaml(text) : parseJson(text);
}

/** Warning header values in RFC 7234 form: 299 - "text". */
export function warningHeader(texts: string[]): string[] {
  return [...new Set(texts)].map((t) => `299 - ${JSON.stringify(t.replace(/[\r\n]+/g, ' '))}`);
}
