// OpenApiService: serves /openapi/v2 (JSON or protobuf) and /openapi/v3 (an
// index of per-group-version documents addressed by content hash). Documents
// are generated from the kind declarations on first request and cached as
// encoded bytes, so start-up pays nothing for them.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KindDefinition } from '../../api/kind.js';
import type { RestObject } from '../../registry/rest.js';
import { ApiError, errors } from '../../machinery/errors.js';
import type { DocumentInfo } from './common.js';
import { sendError, sendRedirect, sendRepresentation, negotiate, Representation } from './http.js';
import { documentTitle, mediaTypes } from './names.js';
import { allRoutes } from './routes.js';
import { buildV2 } from './v2.js';
import { encodeDocument } from './v2-proto.js';
import { buildV3 } from './v3.js';

export interface OpenApiOptions {
  /** `info.title`; the product name by default. */
  title?: string;
  /** `info.version`: the server's version, e.g. v1.32.0. */
  version?: string;
  /** The documents of aggregated group versions, as their servers answered them; `generation` moves when they change. */
  remote?: {
    readonly generation: number;
    /** v3 documents by index key. */
    documents(): Map<string, Buffer>;
    /** v2 paths and definitions to merge into ours. */
    v2(): { paths: Record<string, unknown>; definitions: Record<string, unknown> };
  };
}

/** What the documents describe: the REST objects served now, and a number that moves when they change. */
export interface OpenApiSource {
  restObjects(): RestObject[];
  readonly generation: number;
}

const v2Offers = [mediaTypes.json, mediaTypes.openapiV2Protobuf, mediaTypes.openapiV2ProtobufAlias];
const v3Offers = [mediaTypes.json];
/** A hashed v3 URL never changes content, so clients may keep it for a year. */
const immutableCache = { 'Cache-Control': 'public, immutable, max-age=31536000' };
const revalidate = { 'Cache-Control': 'no-cache, private' };

interface V2Cache { json: Representation; doc: Record<string, unknown>; proto?: Representation }
interface V3Cache { index: Representation; docs: Map<string, Representation> }

export class OpenApiService {
  private readonly info: DocumentInfo;
  private built = -1;
  private rests: RestObject[] = [];
  private kinds: KindDefinition[] = [];
  private v2?: V2Cache;
  private v3?: V3Cache;

  private builtRemote = -1;
  private readonly remote?: OpenApiOptions['remote'];

  constructor(private readonly source: OpenApiSource, options: OpenApiOptions = {}) {
    this.info = { title: options.title ?? documentTitle, version: options.version ?? 'unversioned' };
    this.remote = options.remote;
  }

  /** Drops the documents when what is served changed since they were built; they are rebuilt on the next request. */
  private refresh(): void {
    const remote = this.remote?.generation ?? -1;
    if (this.built === this.source.generation && this.builtRemote === remote) return;
    this.builtRemote = remote;
    this.built = this.source.generation;
    this.rests = this.source.restObjects();
    // Every kind a REST object takes or answers with has its definition in the documents.
    this.kinds = [...new Set(this.rests.flatMap((r) => [r.describe.parentKind, r.describe.kind]))];
    this.v2 = undefined;
    this.v3 = undefined;
  }

  /** Serves /openapi/v2 and /openapi/v3[/...]; returns false when the path is not an OpenAPI path. */
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): boolean {
    const isV2 = path === '/openapi/v2';
    const isV3 = path === '/openapi/v3' || path === '/openapi/v3/' || path.startsWith('/openapi/v3/');
    if (!isV2 && !isV3) return false;
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw errors.methodNotAllowed();
      if (isV2) this.serveV2(req, res);
      else this.serveV3(req, res, path.slice('/openapi/v3'.length).replace(/^\/+/, ''), query);
    } catch (err) {
      sendError(res, err instanceof ApiError ? err : errors.internal(err instanceof Error ? err.message : String(err)));
    }
    return true;
  }

  /** The v2 document as JSON text and object (built on first use). */
  v2Document(): V2Cache {
    this.refresh();
    if (!this.v2) {
      const doc = buildV2(this.kinds, allRoutes(this.rests), this.info);
      mergeRemoteV2(doc, this.remote?.v2());
      this.v2 = { doc, json: new Representation(Buffer.from(JSON.stringify(doc)), mediaTypes.json) };
    }
    return this.v2;
  }

  /** The v3 index and per-group-version documents (built on first use). */
  v3Documents(): V3Cache {
    this.refresh();
    if (!this.v3) {
      const docs = new Map<string, Representation>();
      const index: Record<string, { serverRelativeURL: string }> = {};
      for (const [key, doc] of buildV3(this.kinds, allRoutes(this.rests), this.info)) {
        const rep = new Representation(Buffer.from(JSON.stringify(doc)), mediaTypes.json);
        docs.set(key, rep);
        index[key] = { serverRelativeURL: hashedUrl(key, rep.hash) };
      }
      // Aggregated group versions, as their servers described them (ours win a name both have).
      for (const [key, bytes] of this.remote?.documents() ?? []) {
        if (docs.has(key)) continue;
        const rep = new Representation(bytes, mediaTypes.json);
        docs.set(key, rep);
        index[key] = { serverRelativeURL: hashedUrl(key, rep.hash) };
      }
      this.v3 = { docs, index: new Representation(Buffer.from(JSON.stringify({ paths: index })), mediaTypes.json) };
    }
    return this.v3;
  }

  private serveV2(req: IncomingMessage, res: ServerResponse): void {
    const chosen = negotiate(req.headers.accept, v2Offers);
    if (!chosen) throw errors.notAcceptable(v2Offers);
    const cache = this.v2Document();
    if (chosen === mediaTypes.json) {
      sendRepresentation(req, res, cache.json, revalidate);
      return;
    }
    // Answered under the dot spelling: Go's mime parser (client-go checks the
    // response type) rejects the `@` of the spelling clients ask for.
    cache.proto ??= new Representation(encodeDocument(cache.doc), mediaTypes.openapiV2ProtobufAlias);
    sendRepresentation(req, res, cache.proto, revalidate);
  }

  private serveV3(req: IncomingMessage, res: ServerResponse, key: string, query: URLSearchParams): void {
    const { index, docs } = this.v3Documents();
    if (key === '') {
      // The index is JSON whatever the Accept header says, as upstream.
      sendRepresentation(req, res, index, revalidate);
      return;
    }
    const rep = docs.get(key);
    if (!rep) throw errors.noSuchResource();
    if (!negotiate(req.headers.accept, v3Offers)) throw errors.notAcceptable(v3Offers);
    const hash = query.get('hash');
    if (hash && hash !== rep.hash) {
      // A stale link: send the client to the current content instead of serving it under an old name.
      sendRedirect(res, hashedUrl(key, rep.hash));
      return;
    }
    sendRepresentation(req, res, rep, hash ? { ...immutableCache, Expires: oneYearFromNow() } : revalidate);
  }
}

/** Aggregated servers' paths and definitions added to our v2 document; a name we have keeps ours. */
function mergeRemoteV2(doc: Record<string, any>, remote: { paths: Record<string, unknown>; definitions: Record<string, unknown> } | undefined): void {
  if (!remote) return;
  const paths = (doc.paths ??= {}) as Record<string, unknown>;
  const definitions = (doc.definitions ??= {}) as Record<string, unknown>;
  for (const [path, item] of Object.entries(remote.paths)) if (!Object.hasOwn(paths, path)) paths[path] = item;
  for (const [name, schema] of Object.entries(remote.definitions)) if (!Object.hasOwn(definitions, name)) definitions[name] = schema;
}

function hashedUrl(key: string, hash: string): string {
  return `/openapi/v3/${key}?hash=${hash}`;
}

function oneYearFromNow(): string {
  const d = new Date();
  d.setFullYear(d.getFullYear() + 1);
  return d.toUTCString();
}
