// Reading requests: body size limit, media type and Accept parsing, the body
// format a Content-Type names (parsing the body is api/wire.ts's). Answers are
// written by representation.ts.

import type { IncomingMessage } from 'node:http';
import { errors } from '../machinery/errors.js';
import { maxRequestBodyBytes } from '../machinery/limits.js';
import { isProtobufMediaType } from '../api/protobuf/index.js';
import { bodyMediaTypes, type BodyFormat } from '../api/wire.js';

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

export function readBody(req: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume(); // drain so the connection can answer
    return Promise.reject(errors.requestEntityTooLarge(limit));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Listeners rather than an async iterator: a write's body is one chunk or a few,
  // and the iterator's promises and stream bookkeeping cost more than reading it.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        req.resume();
        reject(errors.requestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => { done(); reject(err); };
    // A client that goes away before the end: the same failure the iterator reported.
    const onClose = () => {
      if (req.complete) return;
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

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

/** Warning header values in RFC 7234 form: 299 - "text". */
export function warningHeader(texts: string[]): string[] {
  return [...new Set(texts)].map((t) => `299 - ${JSON.stringify(t.replace(/[\r\n]+/g, ' '))}`);
}
