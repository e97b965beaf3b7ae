// One request's audit record: the audit-group v1 Events it produces at each
// stage, with what its level allows (metadata; the request body; the response
// body), and the annotations gathered on the way (authorization decision,
// admission webhooks).

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { ApiError } from '../../machinery/errors.js';
import type { UserInfo } from '../../machinery/user.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import { nowMicros, rfc3339Micro } from '../../machinery/time.js';
import type { AuditAnnotation } from '../../admission/types.js';
import type { RequestInfo } from '../requestinfo.js';
import { auditApiVersion, levelAtLeast, type AuditStage, type RequestAuditConfig } from './policy.js';

export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: string;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: Record<string, unknown>;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** RFC 3339 with microseconds, as upstream's MicroTime. */
function microTime(micros: number): string {
  // Events of one request stage often share a microsecond: its text is made once.
  if (micros !== lastTime.micros) lastTime = { micros, text: rfc3339Micro(micros) };
  return lastTime.text;
}

let lastTime = { micros: -1, text: '' };

/** X-Forwarded-For, then X-Real-Ip, then the peer's address, as upstream's SourceIPs. */
function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string') {
    for (const part of forwarded.split(',')) {
      const ip = part.trim();
      if (isIP(ip) && !ips.includes(ip)) ips.push(ip);
    }
  }
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && isIP(real.trim()) && !ips.includes(real.trim())) ips.push(real.trim());
  const peer = req.socket.remoteAddress;
  if (peer && !ips.includes(peer)) ips.push(peer);
  return ips;
}

/**
 * Authenticators keep one user object per connection or token: its JSON is
 * made once. So are a connection's source addresses when no proxy header
 * names others.
 */
const userJsonCache = new WeakMap<UserInfo, string>();
const peerJsonCache = new WeakMap<object, string>();

function userJson(user: UserInfo): string {
  // Upstream's UserInfo leaves empty fields out: no user at all is {}.
  if (user.username === '' && user.groups.length === 0) return '{}';
  let json = userJsonCache.get(user);
  if (json === undefined) userJsonCache.set(user, (json = JSON.stringify(user)));
  return json;
}

function sourceIPsJson(req: IncomingMessage): string {
  if (req.headers['x-forwarded-for'] !== undefined || req.headers['x-real-ip'] !== undefined) return JSON.stringify(sourceIPs(req));
  let json = peerJsonCache.get(req.socket);
  if (json === undefined) peerJsonCache.set(req.socket, (json = JSON.stringify(sourceIPs(req))));
  return json;
}

/** Characters that never need escaping in a JSON string. */
const plainText = /^[\w .:/?=&,+@-]*$/;

/** A string as JSON text; the common plain ones (names, paths, IDs) without a pass of the JSON encoder. */
function jsonString(s: string): string {
  return plainText.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * `"key":"value"` of an annotation. Most requests carry the same annotation
 * objects (authorization's shared decisions): their text is kept with them,
 * and goes with them when they are collected.
 */
const annotationTexts = new WeakMap<AuditAnnotation, { key: string; json: string }>();

function annotationJson(key: string, a: AuditAnnotation): string {
  const kept = annotationTexts.get(a);
  if (kept !== undefined && kept.key === key) return kept.json;
  const json = `${JSON.stringify(key)}:${JSON.stringify(a.value)}`;
  annotationTexts.set(a, { key, json });
  return json;
}

/** An answer's JSON bytes as an object; anything else is left out of the event, as upstream leaves out what it cannot decode. */
function parsedJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  if (jsonTextExceedsDepth(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function withoutManagedFields(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as { metadata?: { managedFields?: unknown }; items?: unknown[] };
  if (obj.metadata && typeof obj.metadata === 'object' && 'managedFields' in obj.metadata) delete obj.metadata.managedFields;
  if (Array.isArray(obj.items)) for (const item of obj.items) withoutManagedFields(item);
  return value;
}

/**
 * Where a record's events go, as the JSON text of an audit-group v1 Event in
 * two parts: the head every stage of the request shares, then what this stage
 * adds. The head is made once and never copied into each event's text.
 */
export type AuditSink = (head: string, rest: string) => Promise<boolean> | undefined;

export class AuditRecord {
  readonly annotations = new Map<string, AuditAnnotation>();
  private readonly received: number;
  /** The request's object as its handler decoded it (JSON, YAML or protobuf alike), at Request level and above. */
  private requestObject?: unknown;
  /** The request object as event JSON, made once for every stage that carries it. */
  private requestJson?: string;
  private requestName?: string;
  /** The answer's object as its handler made it (any wire format), at RequestResponse; read when an event needs it. */
  private responseObject?: () => unknown;
  /** The answer's bytes, for answers no handler described (errors, discovery): used when they are JSON. */
  private responseChunks?: Buffer[];
  /** The fields every stage shares, as JSON without its closing brace. */
  private head?: string;
  private ref?: { name: string | undefined; json: string };
  private notes?: { size: number; json: string };
  /** Set when the answer is a failure Status. */
  failure?: ApiError;
  panicked = false;

  constructor(
    readonly config: RequestAuditConfig,
    private readonly id: string,
    private readonly req: IncomingMessage,
    private readonly info: RequestInfo,
    private readonly user: UserInfo,
    private readonly sink: AuditSink,
    /** When the request arrived (before authentication, as upstream stamps it). */
    received = nowMicros(),
  ) {
    this.received = received;
  }

  get wantsRequestBody(): boolean {
    return levelAtLeast(this.config.level, 'Request');
  }

  get wantsResponseBody(): boolean {
    return levelAtLeast(this.config.level, 'RequestResponse');
  }

  /**
   * The request's decoded body: as upstream, the event carries the object
   * (whatever wire format it came in) at Request level and above, and a
   * create names its object from it at every level.
   */
  keepRequestObject(value: unknown): void {
    const name = typeof value === 'object' && value !== null ? (value as { metadata?: { name?: unknown } }).metadata?.name : undefined;
    if (typeof name === 'string' && name) this.requestName = name;
    if (this.wantsRequestBody) this.requestObject = value;
  }

  /** The answer's object, made on demand (a stored list materializes only if an event wants it). */
  keepResponseObject(make: () => unknown): void {
    if (this.wantsResponseBody) this.responseObject = make;
  }

  keepResponseChunk(chunk: unknown): void {
    // A handler that described its answer made the bytes from it: no copy of them is needed.
    if (chunk === undefined || chunk === null || this.responseObject) return;
    (this.responseChunks ??= []).push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
  }

  /** The one event of a request no authenticator accepted (upstream sends it as the answer starts). */
  emitFailedAuthentication(code: number, message: string): void {
    if (this.config.omitStages.includes('ResponseStarted')) return;
    const info = this.info;
    let json = ',"stage":"ResponseStarted"';
    if (info.isResourceRequest) json += `,"objectRef":${this.objectRefJson()}`;
    json += `,"responseStatus":{"metadata":{},"message":${JSON.stringify(message)},"code":${code}},"stageTimestamp":"${microTime(nowMicros())}"}`;
    this.sink(this.headJson(), json);
  }

  /** Hands the stage's event to the backends; a promise when one blocks (false: a strict one failed). */
  emit(stage: AuditStage, code?: number, impersonated?: UserInfo): Promise<boolean> | undefined {
    if (this.config.omitStages.includes(stage)) return undefined;
    return this.sink(this.headJson(), this.stageJson(stage, code, impersonated));
  }

  private headJson(): string {
    if (this.head === undefined) {
      // Written out by hand: the one JSON.stringify of a nested object here cost more than the rest of the event.
      const q = jsonString;
      const agent = this.req.headers['user-agent'];
      this.head = `{"kind":"Event","apiVersion":"${auditApiVersion}","level":"${this.config.level}","auditID":${q(this.id)}`
        + `,"requestURI":${q(this.req.url ?? '/')},"verb":${q(this.info.verb)},"user":${userJson(this.user)},"sourceIPs":${sourceIPsJson(this.req)}`
        + `${agent ? `,"userAgent":${q(agent)}` : ''},"requestReceivedTimestamp":"${microTime(this.received)}"`;
    }
    return this.head;
  }

  /** What a stage adds to the shared head, up to the event's closing brace. */
  private stageJson(stage: AuditStage, code: number | undefined, impersonated: UserInfo | undefined): string {
    const info = this.info;
    let json = `,"stage":"${stage}"`;
    if (impersonated) json += `,"impersonatedUser":${JSON.stringify(impersonated)}`;
    if (this.requestObject !== undefined && this.requestJson === undefined) {
      this.requestJson = JSON.stringify(this.config.omitManagedFields ? withoutManagedFields(structuredClone(this.requestObject)) : this.requestObject);
    }
    if (info.isResourceRequest) json += `,"objectRef":${this.objectRefJson()}`;
    if (code !== undefined && !this.failure) json += `,"responseStatus":{"metadata":{},"code":${code}}`;
    else if (code !== undefined && this.failure) {
      const s = this.failure.toStatus();
      const status: Record<string, unknown> = { metadata: {}, code, status: s.status };
      if (s.message) status.message = s.message;
      if (s.reason) status.reason = s.reason;
      if (s.details) status.details = s.details;
      json += `,"responseStatus":${JSON.stringify(status)}`;
    }
    if (this.requestJson) json += `,"requestObject":${this.requestJson}`;
    if (stage !== 'ResponseStarted' && (this.responseObject || this.responseChunks)) {
      // Shared objects (from the cache) are copied before managedFields are taken out.
      const described = this.responseObject?.();
      const obj = described !== undefined ? (this.config.omitManagedFields ? structuredClone(described) : described) : parsedJson(Buffer.concat(this.responseChunks ?? []));
      if (obj !== undefined) json += `,"responseObject":${JSON.stringify(this.config.omitManagedFields ? withoutManagedFields(obj) : obj)}`;
    }
    json += `,"stageTimestamp":"${microTime(nowMicros())}"`;
    if (this.annotations.size) json += this.annotationsJson();
    return `${json}}`;
  }

  private objectRefJson(): string {
    const info = this.info;
    const name = info.name ?? this.requestName;
    if (this.ref === undefined || this.ref.name !== name) {
      // Every field is left out when empty, as upstream's ObjectReference (the core group has no apiGroup).
      const q = jsonString;
      let json = '';
      if (info.resource) json += `,"resource":${q(info.resource)}`;
      if (info.namespace) json += `,"namespace":${q(info.namespace)}`;
      if (name) json += `,"name":${q(name)}`;
      if (info.apiGroup) json += `,"apiGroup":${q(info.apiGroup)}`;
      if (info.apiVersion) json += `,"apiVersion":${q(info.apiVersion)}`;
      if (info.subresource) json += `,"subresource":${q(info.subresource)}`;
      this.ref = { name, json: `{${json.slice(1)}}` };
    }
    return this.ref.json;
  }

  /** Annotations are only ever added: the text made for one stage serves the next until one more comes. */
  private annotationsJson(): string {
    if (this.notes === undefined || this.notes.size !== this.annotations.size) {
      // Keys are unique in the map, so the object is written out directly (no prototype to guard).
      let json = '';
      for (const [key, a] of this.annotations) {
        if (levelAtLeast(this.config.level, a.level)) json += `${json ? ',' : ''}${annotationJson(key, a)}`;
      }
      this.notes = { size: this.annotations.size, json: json ? `,"annotations":{${json}}` : '' };
    }
    return this.notes.json;
  }

}
