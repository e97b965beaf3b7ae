// Serving cached documents over HTTP: Accept negotiation, ETag revalidation
// (kubectl keeps the documents in its HTTP cache), gzip, Status errors.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '../../machinery/errors.js';

/** One encoded form of a document, built once. */
export class Representation {
  /** Uppercase hex SHA-512 of the body, as upstream computes document hashes. */
  readonly hash: string;
  private gzipped?: Buffer;

  constructor(readonly body: Buffer, readonly contentType: string) {
    this.hash = createHash('sha512').update(body).digest('hex').toUpperCase();
  }

  get etag(): string {
    return `"${this.hash}"`;
  }

  gzip(): Buffer {
    this.gzipped ??= gzipSync(this.body);
    return this.gzipped;
  }
}

interface MediaRange { type: string; subtype: string; q: number; index: number }

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [{ type: '*', subtype: '*', q: 1, index: 0 }];
  const ranges: MediaRange[] = [];
  header.split(',').forEach((part, index) => {
    const [essence, ...params] = part.split(';');
    const [type = '', subtype = ''] = essence.trim().toLowerCase().split('/');
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((x) => x.trim());
      if (k.toLowerCase() === 'q') q = Number(v);
    }
    if (type && subtype && Number.isFinite(q) && q > 0) ranges.push({ type, subtype, q, index });
  });
  return ranges.sort((a, b) => b.q - a.q || a.index - b.index);
}

/** The first offered media type the Accept header allows, by the client's preference; undefined means 406. */
export function negotiate(accept: string | undefined, offers: readonly string[]): string | undefined {
  for (const range of parseAccept(accept)) {
    for (const offer of offers) {
      const [type, subtype] = offer.toLowerCase().split('/');
      if ((range.type === '*' || range.type === type) && (range.subtype === '*' || range.subtype === subtype)) return offer;
    }
  }
  return undefined;
}

function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : header ?? '';
  return value.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (!q || Number(q.slice(2)) > 0);
  });
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').map((t) => t.trim().replace(/^W\//, '')).some((t) => t === '*' || t === etag);
}

/** Bodies smaller than this are not worth compressing. */
const gzipThreshold = 1400;

/** Sends a representation, or 304 when the client already holds it. */
export function sendRepresentation(req: IncomingMessage, res: ServerResponse, rep: Representation, headers: Record<string, string>): void {
  res.setHeader('Vary', 'Accept, Accept-Encoding');
  res.setHeader('ETag', rep.etag);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (etagMatches(req.headers['if-none-match'], rep.etag)) {
    res.writeHead(304);
    res.end();
    return;
  }
  let body = rep.body;
  if (body.length >= gzipThreshold && acceptsGzip(req.headers['accept-encoding'])) {
    body = rep.gzip();
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.setHeader('Content-Type', rep.contentType);
  res.setHeader('Content-Length', String(body.length));
  res.writeHead(200);
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  const body = Buffer.from(JSON.stringify(err.toStatus()));
  res.writeHead(err.code, { ...err.headers, 'Content-Type': 'application/json', 'Content-Length': String(body.length), 'Cache-Control': 'no-cache, private' });
  res.end(body);
}

export function sendRedirect(res: ServerResponse, location: string): void {
  res.writeHead(301, { Location: location, 'Cache-Control': 'no-cache, private', 'Content-Length': '0' });
  res.end();
}
