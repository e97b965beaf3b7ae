// The TypeScript client over HTTP(S): one connection's settings (a kubeconfig
// context, in-cluster, or given), its credentials (token, token file, basic
// auth, client certificate, exec plugin), the client-side rate limit, 429
// retries, Warning headers and Status errors. It implements ApiClient, so
// the controller kit's informers and work queues run over it unchanged.

import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { readFile } from 'node:fs/promises';
import { BucketRateLimiter } from './ratelimit.js';
import type { Clock } from './clock.js';
import { ExecCredentialProvider, type ExecCredentials, type ExecProviderOptions } from './exec.js';
import { type ClientConfig, type ContextOverrides, type LoadKubeconfigOptions, inClusterConfig, loadKubeconfig, resolveContext } from './kubeconfig.js';
import { agentFor } from './transport.js';
import { ApiCallError, apiVersionOfType, type ApiClient, type ApiObject, type DeleteOptions, type ListOptions, type ListResult, type PatchType, type ResourceType, type WatchHandlers, type EventType } from './types.js';
import { type ResourceHandle } from './resources.js';
import { kinds, type KindTypes } from './kinds.js';
import { upstreamCompat, vocabulary } from '../machinery/vocabulary.js';
import type { SchemaLookup } from '../api/protobuf/index.js';
import { Reader, WireType } from '../machinery/protobufwire.js';

type ProtobufModule = typeof import('../api/protobuf/index.js');

/** A Status the server answered with (or one made for an answer that was not a Status), as a thrown error. */
export class StatusError extends ApiCallError {
  override name = 'StatusError';
  constructor(readonly status: ApiObject) {
    super(Number(status.code) || 0, typeof status.reason === 'string' ? status.reason : '', typeof status.message === 'string' ? status.message : `the server answered ${status.code}`);
  }

  get details(): ApiObject | undefined {
    return this.status.details;
  }
}

/** Reasons the client gives answers that carried no Status, as client-go does. */
const reasonsByCode: Record<number, [string, string]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', 'the server does not allow access to the requested resource'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  406: ['NotAcceptable', 'the server was unable to respond with a content type that the client supports'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Expired', 'the server reported the resource is gone'],
  413: ['RequestEntityTooLarge', 'the server has rejected the request because it is too large'],
  415: ['UnsupportedMediaType', 'the server was unable to respond with a content type that the client supports'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  500: ['InternalError', 'an error on the server has prevented the request from succeeding'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

function statusOf(code: number, body: Buffer): ApiObject {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && (parsed as ApiObject).kind === 'Status') return parsed as ApiObject;
  } catch { /* not JSON: made below */ }
  const [reason, message] = reasonsByCode[code] ?? ['', `an error on the server (${JSON.stringify(body.toString('utf8').slice(0, 200))}) has prevented the request from succeeding`];
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message };
}

/** One warning-value: code, agent, quoted text, optional quoted date (RFC 7234). */
const warningValue = /\s*(\d{3}) +\S+ +"((?:[^"\\]|\\.)*)"(?: +"[^"]*")?\s*(?:,|$)/y;

/**
 * The texts of the code-299 warnings in one Warning header (a header may
 * carry several, comma-separated); other codes are passed over, and so is
 * the rest of a header from the first value that does not parse, as client-go does.
 */
export function parseWarnings(header: string): string[] {
  const out: string[] = [];
  warningValue.lastIndex = 0;
  while (warningValue.lastIndex < header.length) {
    const m = warningValue.exec(header);
    if (!m) break;
    if (m[1] === '299') out.push(m[2]!.replace(/\\(.)/g, '$1'));
  }
  return out;
}

/** The text of a single `299 - "text"` warning, or undefined. */
export function parseWarning(value: string): string | undefined {
  const all = parseWarnings(value);
  return all.length === 1 ? all[0] : undefined;
}

export interface RemoteClientOptions {
  /** Client-side rate limit: requests per second (0: none) and burst. kubectl's 50 and 300 by default. */
  qps?: number;
  burst?: number;
  /** Retries of a request answered 429 (or 5xx) with Retry-After; 10 by default, as client-go. */
  maxRetries?: number;
  /** Each Warning header of each answer; by default written to stderr as kubectl does. */
  onWarning?: (message: string) => void;
  /** For exec credential plugins: terminal detection, stderr, environment. */
  exec?: ExecProviderOptions;
  userAgent?: string;
  /** Waits, injectable so tests of Retry-After need not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** The rate limiter's clock (injectable, as the controller kit's). */
  clock?: Clock;
  /** Ask for protobuf where the server offers it (gets, lists and watches of built-in kinds), JSON otherwise. */
  protobuf?: boolean;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Content type of `body` (JSON by default; patches name their own). */
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Options every write takes. */
export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  /** `Strict` or `Warn` field validation (`Ignore` drops unknown fields silently). */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export interface PatchOptions extends WriteOptions {
  /** Apply only: take the fields other managers own. */
  force?: boolean;
  subresource?: string;
}

export interface ListPageOptions extends ListOptions {
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

export interface ListPage extends ListResult {
  continue?: string;
  remainingItemCount?: number;
  list: ApiObject;
}

export interface WatchOptions extends ListOptions {
  /** Start after this version; without it, the watch lists first and yields the current objects as ADDED. */
  resourceVersion?: string;
  /** Relist when the version falls out of history (410), yielding the difference; otherwise the 410 is thrown. On by default. */
  relistOnExpired?: boolean;
  /** The stream's server-side timeout; the watch then resumes on its own. */
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface WatchEvent {
  type: EventType | 'BOOKMARK';
  object: ApiObject;
}

const patchContentTypes: Record<PatchType | 'apply', string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

const aggregatedDiscoveryAccept = [vocabulary.discoveryGroup, upstreamCompat.discoveryGroup]
  .map((g) => `application/json;g=${g};v=v2;as=APIGroupDiscoveryList`).join(',') + ',application/json';

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The longest Retry-After honoured; a server asking for more is asked again after this. */
const maxRetryAfterMs = 60_000;

export class RemoteClient implements ApiClient {
  /** The context's namespace: where namespaced calls go when they name none. */
  readonly namespace: string;
  private agent: HttpAgent | HttpsAgent;
  private agentCert?: string;
  private readonly exec?: ExecCredentialProvider;
  private readonly limiter?: BucketRateLimiter;
  private readonly sleep: (ms: number) => Promise<void>;
  private tokenFromFile?: { token: string; readAt: number };
  private discovered?: ResourceType[];
  /** The schemas and codec of built-in kinds, once protobuf was first asked for. */
  private protobuf?: { schemas: SchemaLookup; codec: ProtobufModule };

  constructor(readonly config: ClientConfig, private readonly options: RemoteClientOptions = {}) {
    this.namespace = config.namespace || 'default';
    if (config.exec) this.exec = new ExecCredentialProvider(config.exec, config, options.exec);
    const qps = options.qps ?? 50;
    if (qps > 0) this.limiter = new BucketRateLimiter(qps, options.burst ?? 300, options.clock);
    this.sleep = options.sleep ?? defaultSleep;
    this.agent = agentFor(config, config);
    this.agentCert = config.certPem;
  }

  /** A client for a kubeconfig's context (KUBECONFIG, else ~/.kube/config, unless `paths` are given). */
  static async fromKubeconfig(options: LoadKubeconfigOptions & ContextOverrides & RemoteClientOptions = {}): Promise<RemoteClient> {
    return new RemoteClient(await resolveContext(await loadKubeconfig(options), options), options);
  }

  /** A client for the pod it runs in: the service account's token, CA and namespace. */
  static async inCluster(options: RemoteClientOptions & { env?: Readonly<Record<string, string | undefined>>; dir?: string } = {}): Promise<RemoteClient> {
    return new RemoteClient(await inClusterConfig(options), options);
  }

  /** Closes idle connections; the client stays usable. */
  close(): void {
    this.agent.destroy();
  }

  private async bearerToken(): Promise<string | undefined> {
    if (this.config.token) return this.config.token;
    if (!this.config.tokenFile) return undefined;
    // Re-read each minute: projected service account tokens rotate.
    const now = Date.now();
    if (!this.tokenFromFile || now - this.tokenFromFile.readAt > 60_000) {
      this.tokenFromFile = { token: (await readFile(this.config.tokenFile, 'utf8')).trim(), readAt: now };
    }
    return this.tokenFromFile.token;
  }

  private agentWith(creds: ExecCredentials | undefined): HttpAgent | HttpsAgent {
    const certPem = creds?.certPem ?? this.config.certPem;
    if (certPem !== this.agentCert) {
      // A new certificate needs a new handshake: connections made with the old one go.
      this.agent.destroy();
      this.agent = agentFor(this.config, creds?.certPem ? creds : this.config);
      this.agentCert = certPem;
    }
    return this.agent;
  }

  private async send(method: string, url: URL, headers: Record<string, string>, payload: Buffer | undefined, creds: ExecCredentials | undefined): Promise<IncomingMessage> {
    if (this.limiter) {
      const wait = this.limiter.when();
      if (wait > 0) await this.sleep(wait);
    }
    const h: Record<string, string> = { 'User-Agent': this.options.userAgent ?? `plat-client/${process.versions.node}`, ...headers };
    if (creds?.token) h.Authorization = `Bearer ${creds.token}`;
    else if (!creds) {
      const token = await this.bearerToken();
      if (token) h.Authorization = `Bearer ${token}`;
      else if (this.config.username !== undefined || this.config.password !== undefined) {
        h.Authorization = `Basic ${Buffer.from(`${this.config.username ?? ''}:${this.config.password ?? ''}`).toString('base64')}`;
      }
    }
    if (payload) h['Content-Length'] = String(payload.length);
    const agent = this.agentWith(creds);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers: h, agent }, resolve);
      req.on('error', reject);
      req.end(payload);
    });
  }

  private warn(res: IncomingMessage): void {
    for (const header of res.headersDistinct.warning ?? []) {
      for (const text of parseWarnings(header)) {
        if (this.options.onWarning) this.options.onWarning(text);
        else process.stderr.write(`Warning: ${text}\n`);
      }
    }
  }

  /**
   * One request with its retries: once with fresh exec credentials after a
   * 401, and after Retry-After on 429 (or a 5xx that carries one). Resolves
   * with the response still unread, for the caller to read or stream.
   */
  private async open(method: string, path: string, opts: RequestOptions): Promise<IncomingMessage> {
    const url = new URL(this.config.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json', ...opts.headers };
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['Content-Type'] = opts.contentType ?? 'application/json';
    }
    let creds = this.exec ? await this.exec.get() : undefined;
    let refreshed = false;
    const maxRetries = this.options.maxRetries ?? 10;
    for (let attempt = 0; ; attempt++) {
      const res = await this.send(method, url, headers, payload, creds);
      if (res.statusCode === 401 && this.exec && creds && !refreshed) {
        res.resume();
        refreshed = true;
        creds = await this.exec.refresh(creds);
        continue;
      }
      const retryAfter = res.headers['retry-after'];
      const code = res.statusCode ?? 0;
      if ((code === 429 || (code >= 500 && retryAfter !== undefined)) && attempt < maxRetries) {
        const seconds = Number(retryAfter);
        res.resume();
        await this.sleep(Math.min(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000, maxRetryAfterMs));
        continue;
      }
      this.warn(res);
      return res;
    }
  }

  /** Sends a request and reads the whole answer; non-2xx answers are thrown as StatusErrors. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<RawResponse> {
    const res = await this.open(method, path, opts);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      // A Status in protobuf when protobuf was asked for.
      const decoded = this.protobuf?.codec.hasEnvelopeMagic(body) ? this.decodeProtobuf(body) : undefined;
      throw new StatusError(decoded?.kind === 'Status' ? decoded : statusOf(status, body));
    }
    return { status, headers: res.headers, body };
  }

  private decodeProtobuf(body: Buffer): ApiObject | undefined {
    try {
      return this.protobuf!.codec.decodeProtobufObject(body, this.protobuf!.schemas);
    } catch {
      return undefined;
    }
  }

  /** A request whose answer is JSON (or protobuf, when asked for and answered so). */
  async requestJson<T = ApiObject>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request(method, path, opts);
    if (this.protobuf?.codec.hasEnvelopeMagic(res.body) && String(res.headers['content-type'] ?? '').includes('protobuf')) {
      const decoded = this.decodeProtobuf(res.body);
      if (!decoded) throw new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'the server answered a protobuf body this client cannot decode' });
      return decoded as T;
    }
    return JSON.parse(res.body.toString('utf8')) as T;
  }

  /**
   * The Accept header for reading `type`: protobuf first when asked for and
   * this client knows the kind's schema (built-in kinds), JSON otherwise.
   */
  async readAccept(type: ResourceType): Promise<string> {
    if (!this.options.protobuf) return 'application/json';
    if (!this.protobuf) {
      // Loaded on first use: the catalog is large, and JSON needs none of it.
      const [{ builtinKinds, builtinAnsweredKinds }, codec] = await Promise.all([import('../api/catalog.js'), import('../api/protobuf/index.js')]);
      this.protobuf = { schemas: codec.builtinSchemaLookup([...builtinKinds, ...builtinAnsweredKinds]), codec };
    }
    return this.protobuf.schemas(apiVersionOfType(type), type.kind) ? `${vocabulary.protobufMediaType}, application/json` : 'application/json';
  }

  // ---- discovery -------------------------------------------------------

  /** Lists served resources (aggregated discovery where offered, else one request per group version); cached until called again. */
  async discover(): Promise<ResourceType[]> {
    const found: ResourceType[] = [];
    for (const root of ['/api', '/apis'] as const) {
      const res = await this.request('GET', root, { accept: aggregatedDiscoveryAccept });
      const doc = JSON.parse(res.body.toString('utf8')) as ApiObject;
      if (doc.kind === 'APIGroupDiscoveryList') found.push(...aggregatedTypes(doc));
      else found.push(...await this.legacyDiscovery(root, doc));
    }
    this.discovered = found;
    return found;
  }

  private async legacyDiscovery(root: '/api' | '/apis', doc: ApiObject): Promise<ResourceType[]> {
    const groupVersions: { group: string; version: string }[] = root === '/api'
      ? (doc.versions as string[] ?? []).map((version) => ({ group: '', version }))
      : (doc.groups as ApiObject[] ?? []).flatMap((g) => (g.versions as ApiObject[] ?? []).map((v) => ({ group: String(g.name), version: String(v.version) })));
    const out: ResourceType[] = [];
    for (const { group, version } of groupVersions) {
      const list = await this.requestJson('GET', group ? `/apis/${group}/${version}` : `/api/${version}`);
      for (const r of (list.resources as ApiObject[] ?? [])) {
        if (typeof r.name !== 'string' || r.name.includes('/')) continue;
        out.push({ group, version, resource: r.name, kind: String(r.kind), namespaced: r.namespaced === true, verbs: Array.isArray(r.verbs) ? r.verbs : [] });
      }
    }
    return out;
  }

  /** The resource types of the last discovery (call `discover()` first). */
  resources(): ResourceType[] {
    if (!this.discovered) throw new Error('call discover() before resources()');
    return this.discovered;
  }

  /** A served type by (group, plural), preferring `version`; discovers once when needed. */
  async resourceType(handle: ResourceHandle): Promise<ResourceType> {
    const types = this.discovered ?? await this.discover();
    const served = types.filter((r) => r.group === handle.group && r.resource === handle.resource);
    const found = served.find((r) => r.version === handle.version) ?? served[0];
    if (!found) throw new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: `the server doesn't have a resource type "${handle.group ? `${handle.resource}.${handle.group}` : handle.resource}"` });
    return found;
  }

  /** A typed client for a built-in kind (`client.typed('Pod')`), in the context's namespace unless `namespace` is given; no discovery needed. */
  typed<K extends keyof KindTypes>(kind: K, namespace?: string): ResourceClient<KindTypes[K] & ApiObject> {
    return new ResourceClient<KindTypes[K] & ApiObject>(this, kinds[kind], namespace);
  }

  /** A client for one resource type, by a discovered type or by (group, plural[, version]). */
  async resource(handle: ResourceType | ResourceHandle): Promise<ResourceClient> {
    const type = 'kind' in handle ? handle as ResourceType : await this.resourceType(handle);
    return new ResourceClient(this, type);
  }

  // ---- ApiClient (what the controller kit's informers call) -----------

  async get(type: ResourceType, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
    try {
      return await this.requestJson('GET', objectPath(type, namespace, name));
    } catch (e) {
      if (e instanceof ApiCallError && e.code === 404) return undefined;
      throw e;
    }
  }

  async list(type: ResourceType, namespace?: string, options: ListOptions = {}): Promise<ListResult> {
    const page = await new ResourceClient(this, type).list({ ...options, namespace });
    return { items: page.items, resourceVersion: page.resourceVersion };
  }

  create(type: ResourceType, namespace: string | undefined, object: ApiObject): Promise<ApiObject> {
    return this.requestJson('POST', collectionPath(type, namespace ?? object.metadata?.namespace), { body: object });
  }

  update(type: ResourceType, namespace: string | undefined, object: ApiObject, subresource?: string): Promise<ApiObject> {
    return this.requestJson('PUT', objectPath(type, namespace ?? object.metadata?.namespace, String(object.metadata?.name ?? ''), subresource), { body: object });
  }

  patch(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown): Promise<ApiObject> {
    return this.requestJson('PATCH', objectPath(type, namespace, name), { body: patch, contentType: patchContentTypes[patchType] });
  }

  async delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<boolean> {
    try {
      await this.request('DELETE', objectPath(type, namespace, name), { body: { kind: 'DeleteOptions', apiVersion: 'v1', ...options } });
      return true;
    } catch (e) {
      if (e instanceof ApiCallError && e.code === 404) return false;
      throw e;
    }
  }

  async watch(type: ResourceType, namespace: string | undefined, resourceVersion: string, handlers: WatchHandlers, options: ListOptions = {}): Promise<{ stop(): void }> {
    const stream = await this.openWatch(type, namespace, resourceVersion, options);
    let ended = false;
    const end = (reason: { expired: boolean; message: string }) => {
      if (ended) return;
      ended = true;
      handlers.onEnd(reason);
    };
    (async () => {
      try {
        for await (const batch of stream.batches()) {
          const events: { type: EventType; object: ApiObject }[] = [];
          for (const e of batch) {
            if (e.type === 'ERROR') {
              if (events.length) handlers.onEvents(events.splice(0));
              end({ expired: Number(e.object?.code) === 410, message: String(e.object?.message ?? 'watch error') });
              stream.stop();
              return;
            }
            if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') events.push(e as { type: EventType; object: ApiObject });
          }
          if (events.length) handlers.onEvents(events);
        }
        end({ expired: false, message: 'the watch stream ended' });
      } catch (e) {
        end({ expired: false, message: (e as Error).message });
      }
    })();
    return { stop: () => { ended = true; stream.stop(); } };
  }

  /** Opens a watch stream; a 410 before the stream starts is thrown as a StatusError (code 410). */
  async openWatch(type: ResourceType, namespace: string | undefined, resourceVersion: string | undefined, options: ListOptions & { timeoutSeconds?: number } = {}): Promise<WatchStream> {
    const query: RequestOptions['query'] = { watch: 1, allowWatchBookmarks: true, resourceVersion, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, timeoutSeconds: options.timeoutSeconds };
    const headers: Record<string, string> = {};
    const accept = options.metadataOnly ? `application/json;as=PartialObjectMetadata;g=${vocabulary.metaGroup};v=v1,application/json` : await this.readAccept(type);
    const res = await this.open('GET', collectionPath(type, namespace), { query, accept, headers });
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      throw new StatusError(statusOf(status, Buffer.concat(chunks)));
    }
    const protobuf = this.protobuf;
    if (protobuf && String(res.headers['content-type'] ?? '').includes('protobuf')) {
      return new WatchStream(res, (event) => decodeWatchEvent(event, protobuf.codec, protobuf.schemas));
    }
    return new WatchStream(res);
  }
}

/**
 * One protobuf watch frame's event: an enveloped WatchEvent {type=1,
 * object=2 RawExtension {raw=1}} whose raw bytes are the enveloped object.
 */
function decodeWatchEvent(frame: Buffer, codec: ProtobufModule, schemas: SchemaLookup): { type: string; object: ApiObject } {
  const message = codec.decodeEnvelope(frame).raw;
  let type = '';
  let raw: Uint8Array | undefined;
  const reader = new Reader(message);
  while (!reader.done) {
    const tag = reader.tag();
    if (tag.field === 1 && tag.wireType === WireType.lengthDelimited) type = reader.string();
    else if (tag.field === 2 && tag.wireType === WireType.lengthDelimited) {
      const extension = new Reader(reader.bytes());
      while (!extension.done) {
        const inner = extension.tag();
        if (inner.field === 1 && inner.wireType === WireType.lengthDelimited) raw = extension.bytes();
        else extension.skip(inner.wireType);
      }
    } else reader.skip(tag.wireType);
  }
  if (!raw) throw new Error('a protobuf watch event without an object');
  return { type, object: codec.decodeProtobufObject(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), schemas) };
}

/** The events of one watch response, read as newline-delimited JSON. */
export class WatchStream {
  private stopped = false;
  /** `decodeFrame`: the stream is protobuf, frames of a 4-byte length and an event. */
  constructor(private readonly res: IncomingMessage, private readonly decodeFrame?: (frame: Buffer) => { type: string; object: ApiObject }) {}

  stop(): void {
    this.stopped = true;
    this.res.destroy();
  }

  /** Each chunk's complete events together (one batch per read), so a reader can apply them at once. */
  async *batches(): AsyncGenerator<{ type: string; object: ApiObject }[]> {
    if (this.decodeFrame) {
      yield* this.frames(this.decodeFrame);
      return;
    }
    let pending = '';
    // Decoded as a stream: a character split between two chunks stays whole.
    this.res.setEncoding('utf8');
    try {
      for await (const chunk of this.res) {
        pending += chunk as string;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        const batch: { type: string; object: ApiObject }[] = [];
        for (const line of lines) {
          if (!line.trim()) continue;
          const event = JSON.parse(line) as { type: string; object: ApiObject };
          batch.push(event);
        }
        if (batch.length) yield batch;
      }
    } catch (e) {
      if (!this.stopped) throw e;
    }
    if (pending.trim() && !this.stopped) yield [JSON.parse(pending)];
  }

  private async *frames(decode: (frame: Buffer) => { type: string; object: ApiObject }): AsyncGenerator<{ type: string; object: ApiObject }[]> {
    let pending: Buffer = Buffer.alloc(0);
    try {
      for await (const chunk of this.res) {
        pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : chunk as Buffer;
        const batch: { type: string; object: ApiObject }[] = [];
        while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
          const length = pending.readUInt32BE(0);
          batch.push(decode(pending.subarray(4, 4 + length)));
          pending = pending.subarray(4 + length);
        }
        if (batch.length) yield batch;
      }
    } catch (e) {
      if (!this.stopped) throw e;
    }
  }
}

function aggregatedTypes(doc: ApiObject): ResourceType[] {
  const out: ResourceType[] = [];
  for (const item of (doc.items as ApiObject[] ?? [])) {
    const group = typeof item.metadata?.name === 'string' ? item.metadata.name : '';
    for (const v of (item.versions as ApiObject[] ?? [])) {
      for (const r of (v.resources as ApiObject[] ?? [])) {
        out.push({ group, version: String(v.version), resource: String(r.resource), kind: String(r.responseKind?.kind ?? ''), namespaced: r.scope === 'Namespaced', verbs: Array.isArray(r.verbs) ? r.verbs : [] });
      }
    }
  }
  return out;
}

function groupVersionPath(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
}

const seg = (s: string) => encodeURIComponent(s);

export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  const ns = type.namespaced && namespace ? `/namespaces/${seg(namespace)}` : '';
  return `${groupVersionPath(type)}${ns}/${type.resource}`;
}

export function objectPath(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): string {
  if (!name) throw new StatusError({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest', message: 'resource name may not be empty' });
  return `${collectionPath(type, namespace)}/${seg(name)}${subresource ? `/${seg(subresource)}` : ''}`;
}

function writeQuery(opts: WriteOptions & { force?: boolean }): RequestOptions['query'] {
  return { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager, fieldValidation: opts.fieldValidation, force: opts.force === undefined ? undefined : opts.force };
}

const objectKey = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Every verb on one resource type; namespaced types use `namespace` (or the client's) unless a call names one. */
export class ResourceClient<T extends ApiObject = ApiObject> {
  constructor(private readonly client: RemoteClient, readonly type: ResourceType, private readonly ns?: string) {}

  /** The same resource in `namespace` (or across all namespaces with `''`). */
  inNamespace(namespace: string): ResourceClient<T> {
    return new ResourceClient<T>(this.client, this.type, namespace);
  }

  private namespaceOf(obj?: ApiObject): string | undefined {
    if (!this.type.namespaced) return undefined;
    return this.ns ?? obj?.metadata?.namespace ?? this.client.namespace;
  }

  async get(name: string, opts: { resourceVersion?: string; subresource?: string } = {}): Promise<T> {
    const accept = opts.subresource ? 'application/json' : await this.client.readAccept(this.type);
    return this.client.requestJson<T>('GET', objectPath(this.type, this.namespaceOf(), name, opts.subresource), { accept, query: { resourceVersion: opts.resourceVersion } });
  }

  /** One page; pass `limit` and the previous page's `continue` for the next. */
  async list(opts: ListPageOptions & { namespace?: string } = {}): Promise<ListPage> {
    const ns = opts.namespace ?? (this.type.namespaced ? this.ns ?? '' : undefined);
    const accept = opts.metadataOnly ? `application/json;as=PartialObjectMetadataList;g=${vocabulary.metaGroup};v=v1,application/json` : await this.client.readAccept(this.type);
    const list = await this.client.requestJson('GET', collectionPath(this.type, ns), {
      accept,
      query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit, continue: opts.continue, resourceVersion: opts.resourceVersion, resourceVersionMatch: opts.resourceVersionMatch },
    });
    const meta = list.metadata ?? {};
    const kind = typeof list.kind === 'string' && list.kind.endsWith('List') ? list.kind.slice(0, -4) : this.type.kind;
    const apiVersion = apiVersionOfType(this.type);
    // Items of a list carry no kind of their own on the wire.
    const items = (list.items as ApiObject[] ?? []).map((o) => (o.kind ? o : { apiVersion, kind, ...o }));
    const page: ListPage = { items, resourceVersion: String(meta.resourceVersion ?? ''), list };
    if (meta.continue) page.continue = meta.continue;
    if (typeof meta.remainingItemCount === 'number') page.remainingItemCount = meta.remainingItemCount;
    return page;
  }

  /** Every object, `pageSize` at a time, from one consistent snapshot. */
  async *listAll(opts: ListOptions & { pageSize?: number; namespace?: string } = {}): AsyncGenerator<T> {
    let cont: string | undefined;
    do {
      const page = await this.list({ ...opts, limit: opts.pageSize ?? 500, continue: cont });
      for (const item of page.items) yield item as T;
      cont = page.continue;
    } while (cont);
  }

  create(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.client.requestJson<T>('POST', collectionPath(this.type, this.namespaceOf(obj)), { body: obj, query: writeQuery(opts) });
  }

  update(obj: T, opts: WriteOptions & { subresource?: string } = {}): Promise<T> {
    return this.client.requestJson<T>('PUT', objectPath(this.type, this.namespaceOf(obj), String(obj.metadata?.name ?? ''), opts.subresource), { body: obj, query: writeQuery(opts) });
  }

  updateStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.update(obj, { ...opts, subresource: 'status' });
  }

  patch(name: string, patchType: PatchType, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    return this.client.requestJson<T>('PATCH', objectPath(this.type, this.namespaceOf(), name, opts.subresource), { body: patch, contentType: patchContentTypes[patchType], query: writeQuery(opts) });
  }

  /** Server-side apply of `obj` (its name from metadata) as `fieldManager`. */
  apply(obj: Partial<T> & ApiObject, opts: PatchOptions & { fieldManager: string }): Promise<T> {
    const name = String(obj.metadata?.name ?? '');
    const body = { apiVersion: obj.apiVersion ?? apiVersionOfType(this.type), kind: obj.kind ?? this.type.kind, ...obj };
    return this.client.requestJson<T>('PATCH', objectPath(this.type, this.namespaceOf(obj), name, opts.subresource), { body, contentType: patchContentTypes.apply, query: writeQuery(opts) });
  }

  /** Resolves with the server's answer: the object (still being deleted) or a Status. */
  delete(name: string, opts: DeleteOptions & { dryRun?: boolean } = {}): Promise<ApiObject> {
    const { dryRun, ...options } = opts;
    return this.client.requestJson('DELETE', objectPath(this.type, this.namespaceOf(), name), { body: { kind: 'DeleteOptions', apiVersion: 'v1', ...options }, query: { dryRun: dryRun ? 'All' : undefined } });
  }

  deleteCollection(opts: ListOptions & DeleteOptions & { dryRun?: boolean } = {}): Promise<ApiObject> {
    const { labelSelector, fieldSelector, dryRun, metadataOnly: _m, ...options } = opts;
    return this.client.requestJson('DELETE', collectionPath(this.type, this.namespaceOf() ?? undefined), {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', ...options },
      query: { labelSelector, fieldSelector, dryRun: dryRun ? 'All' : undefined },
    });
  }

  /**
   * Changes as an async iterator that does not end on its own: a dropped
   * stream resumes from the last version seen (bookmarks move it too), and a
   * version that fell out of history (410) is relisted, the difference
   * yielded as events, so nothing is missed or repeated (a deletion found
   * by a relist carries the object's kind, name, namespace and last
   * resourceVersion, not its last state). Break out of the loop (or abort `signal`) to stop.
   */
  async *watch(opts: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    const ns = this.type.namespaced ? this.ns ?? '' : undefined;
    // What the caller has been told: key → resourceVersion (not whole objects: a watch of many objects would hold them all).
    const known = new Map<string, string>();
    const tombstone = (key: string, resourceVersion: string): ApiObject => {
      const slash = key.indexOf('/');
      const namespace = key.slice(0, slash);
      return { apiVersion: apiVersionOfType(this.type), kind: this.type.kind, metadata: { ...(namespace ? { namespace } : {}), name: key.slice(slash + 1), resourceVersion } };
    };
    const relist = async function* (this: ResourceClient<T>): AsyncGenerator<WatchEvent, string> {
      const seen = new Set<string>();
      let rv = '';
      let cont: string | undefined;
      do {
        const page = await this.list({ labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: 500, continue: cont, namespace: ns });
        rv = page.resourceVersion;
        for (const obj of page.items) {
          const key = objectKey(obj);
          seen.add(key);
          const old = known.get(key);
          const version = String(obj.metadata?.resourceVersion ?? '');
          known.set(key, version);
          if (old === undefined) yield { type: 'ADDED', object: obj };
          else if (old !== version) yield { type: 'MODIFIED', object: obj };
        }
        cont = page.continue;
      } while (cont);
      for (const [key, version] of known) {
        if (seen.has(key)) continue;
        known.delete(key);
        yield { type: 'DELETED', object: tombstone(key, version) };
      }
      return rv;
    }.bind(this);
    let rv = opts.resourceVersion;
    if (rv === undefined) rv = yield* relist();
    let backoffMs = 100;
    while (!opts.signal?.aborted) {
      let stream: WatchStream;
      try {
        stream = await this.client.openWatch(this.type, ns, rv, { ...opts, timeoutSeconds: opts.timeoutSeconds });
      } catch (e) {
        if (e instanceof ApiCallError && e.code === 410 && opts.relistOnExpired !== false) {
          rv = yield* relist();
          continue;
        }
        if (e instanceof ApiCallError && e.code !== 429 && e.code < 500) throw e;
        // The server is away (restarting, overloaded): try again, a little later each time.
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5_000);
        continue;
      }
      const onAbort = () => stream.stop();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      let expired = false;
      let interrupted = false;
      let received = false;
      try {
        for await (const batch of stream.batches()) {
          backoffMs = 100;
          received = true;
          for (const e of batch) {
            if (e.type === 'ERROR') {
              const code = Number(e.object?.code);
              if (code === 410 && opts.relistOnExpired !== false) {
                expired = true;
                break;
              }
              // The server going away or too busy: resume after a pause; anything else is the caller's to see.
              if (code !== 429 && code < 500) throw new StatusError(e.object);
              interrupted = true;
              break;
            }
            const version = e.object?.metadata?.resourceVersion;
            if (typeof version === 'string' && version) rv = version;
            if (e.type === 'BOOKMARK') continue;
            const key = objectKey(e.object);
            if (e.type === 'DELETED') known.delete(key);
            else known.set(key, typeof version === 'string' ? version : '');
            yield e as WatchEvent;
          }
          if (expired || interrupted) break;
        }
      } catch (e) {
        if (e instanceof StatusError) throw e;
        // A dropped connection: resume from `rv` below.
      } finally {
        opts.signal?.removeEventListener('abort', onAbort);
        stream.stop();
      }
      if (expired) rv = yield* relist();
      else if (interrupted || !received) {
        // A stream that ended at once (the server stopping, say) is not reopened in a tight loop.
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5_000);
      }
    }
  }
}

