// Reading requests: body size limit, JSON, YAML and protobuf decoding, media
// type and Accept parsing. Answers are written by representation.ts.

import type { IncomingMessage } from 'node:http';
import { Composer, CST, Document, isMap, isNode, isScalar, isSeq, LineCounter, Parser } from 'yaml';
import { errors } from '../machinery/errors.js';
import { maxNestingDepth, maxRequestBodyBytes, tooDeep, valueExceedsDepth } from '../machinery/limits.js';
import { scanJsonText, type NumberText } from '../machinery/duplicates.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { decodeProtobufObject, isProtobufMediaType, type SchemaLookup } from '../api/protobuf/index.js';

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

/** A parsed body, and what its text told that the parsed value lost. */
export interface ParsedBody {
  value: unknown;
  /** Strict-decoding messages for keys the text repeated; looked for only when asked. */
  duplicates: string[];
  /** The literal text of numbers, for JSON text. */
  numberText?: NumberText;
}

/** Whether a YAML stream's syntax tree nests collections deeper than the limit; walked without recursion. */
function yamlTreeExceedsDepth(tokens: readonly CST.Token[]): boolean {
  const stack: Array<[CST.Token | null | undefined, number]> = tokens.map((t) => [t, 0]);
  while (stack.length) {
    const [token, depth] = stack.pop()!;
    if (!token) continue;
    if (token.type === 'document') stack.push([token.value, depth]);
    else if (CST.isCollection(token)) {
      if (depth + 1 > maxNestingDepth) return true;
      for (const item of token.items) stack.push([item.key, depth + 1], [item.value, depth + 1]);
    }
  }
  return false;
}

/** A map key as Go's %#v prints it in upstream's duplicate-key message. */
function goKey(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return value === null || value === undefined ? '<nil>' : String(value);
}

/**
 * Keys given twice in one mapping, in upstream's words (its strict YAML
 * reader): `yaml: unmarshal errors:` and a line per repeat, numbered by the
 * line of the repeated value. Merged (`<<`) keys are not compared.
 */
function yamlDuplicates(doc: Document, lines: LineCounter): string[] {
  const found: Array<{ at: number; key: unknown }> = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isSeq(node)) for (const item of node.items) stack.push(item);
    if (!isMap(node)) continue;
    const seen = new Set<string>();
    for (const pair of node.items) {
      stack.push(pair.key, pair.value);
      if (!isScalar(pair.key) || pair.key.value === '<<') continue;
      const id = `${typeof pair.key.value}:${String(pair.key.value)}`;
      if (seen.has(id)) {
        const at = (isNode(pair.value) && pair.value.range ? pair.value.range[0] : pair.key.range?.[0]) ?? 0;
        found.push({ at, key: pair.key.value });
      }
      seen.add(id);
    }
  }
  if (!found.length) return [];
  // In the order the document gives them, as upstream's decoder meets them.
  const lineOf = ({ at, key }: { at: number; key: unknown }) => `line ${lines.linePos(at).line}: key ${goKey(key)} already set in map`;
  return [`yaml: unmarshal errors:\n  ${found.sort((a, b) => a.at - b.at).map(lineOf).join('\n  ')}`];
}

/**
 * Parses YAML text (one document) to JSON values; malformed input is a 400.
 * The syntax tree is checked for depth before anything recurses over it (the
 * composer does, and a stack overflow inside the yaml package can take the
 * process down), and the value again after aliases are expanded.
 */
export function readYaml(text: string, findDuplicates = false): ParsedBody {
  const fail = (message: string) => errors.badRequest(`the object provided is unrecognized: error converting YAML to JSON: ${message}`);
  const lines = new LineCounter();
  const tokens = [...new Parser(lines.addNewLine).parse(text)];
  if (yamlTreeExceedsDepth(tokens)) throw tooDeep();
  let value: unknown;
  let duplicates: string[] = [];
  try {
    // As upstream's YAML 1.1 reader, `<<` merges a mapping into another.
    const docs = [...new Composer({ schema: 'core', uniqueKeys: false, intAsBigInt: false, merge: true }).compose(tokens)];
    if (docs.length !== 1) throw new Error(docs.length === 0 ? 'empty document' : 'expected one YAML document');
    const doc = docs[0];
    const err = doc.errors[0];
    if (err) {
      const { line, col } = lines.linePos(err.pos[0]);
      throw new Error(`${err.message.split('\n')[0]} at line ${line}, column ${col}`);
    }
    value = doc.toJS({ maxAliasCount: 100 });
    if (findDuplicates) duplicates = yamlDuplicates(doc, lines);
  } catch (e) {
    throw fail((e as Error).message.split('\n')[0]);
  }
  if (valueExceedsDepth(value)) throw tooDeep();
  return { value, duplicates };
}

/** Parses JSON text; malformed or too deeply nested input is a 400 naming what was wrong. */
export function parseJson(text: string): unknown {
  return readJson(text).value;
}

/**
 * Parses JSON text: one walk for its depth, repeated keys (when asked) and
 * the literal text of its numbers, then JSON.parse for the value.
 */
export function readJson(text: string, findDuplicates = false): ParsedBody {
  if (text.trim() === '') throw errors.badRequest('the object provided is unrecognized: empty body');
  const { duplicates, numberText } = scanJsonText(text, findDuplicates);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  return { value, duplicates: duplicates.map((f) => `duplicate field "${f}"`), numberText };
}

/**
 * Parses a body in its format. Protobuf needs the schemas of the kinds that
 * may arrive (built-in kinds only); without them it is a 415. Repeated keys
 * are looked for when `findDuplicates` (fieldValidation Warn or Strict).
 */
export function parseBody(body: Buffer, format: BodyFormat, protobufSchemas?: SchemaLookup, findDuplicates = false): ParsedBody {
  if (format === 'protobuf') {
    if (!protobufSchemas) throw errors.unsupportedMediaType(vocabulary.protobufMediaType, bodyMediaTypes.slice(0, 2));
    return { value: decodeProtobufObject(body, protobufSchemas), duplicates: [] };
  }
  const text = body.toString('utf8');
  return format === 'yaml' ? readYaml(text, findDuplicates) : readJson(text, findDuplicates);
}

/** The value of a body in its format (see parseBody). */
export function decodeBody(body: Buffer, format: BodyFormat, protobufSchemas?: SchemaLookup): unknown {
  return parseBody(body, format, protobufSchemas).value;
}

/** Warning header values in RFC 7234 form: 299 - "text". */
export function warningHeader(texts: string[]): string[] {
  return [...new Set(texts)].map((t) => `299 - ${JSON.stringify(t.replace(/[\r\n]+/g, ' '))}`);
}
