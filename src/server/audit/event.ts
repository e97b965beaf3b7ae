// One request's audit record: the audit.plat.io/v1 Events it produces at each
// stage, with what its level allows (metadata; the request body; the response
// body), and the annotations gathered on the way (authorization decision,
// admission webhooks).

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { ApiError } from '../../machinery/errors.js';
import type { UserInfo } from '../../machinery/user.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import { setOwn } from '../../machinery/ownkeys.js';
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
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

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

/** JSON bodies as objects; anything else is left out of the event, as upstream leaves out what it cannot decode. */
function parsedJson(body: Buffer, contentType: string | number | string[] | undefined): unknown {
  if (typeof contentType === 'string' && !contentType.includes('json')) return undefined;
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

/** Where a record's events go. */
export type AuditSink = (event: AuditEvent) => void;

export class AuditRecord {
  readonly annotations = new Map<string, AuditAnnotation>();
  private readonly received = Date.now();
  private requestBody?: Buffer;
  private requestObject?: unknown;
  private responseChunks?: Buffer[];
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
  ) {}

  get wantsRequestBody(): boolean {
    return levelAtLeast(this.config.level, 'Request');
  }

  get wantsResponseBody(): boolean {
    return levelAtLeast(this.config.level, 'RequestResponse');
  }

  keepRequestBody(body: Buffer): void {
    if (this.wantsRequestBody) this.requestBody = body;
  }

  keepResponseChunk(chunk: unknown): void {
    if (chunk === undefined || chunk === null) return;
    (this.responseChunks ??= []).push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
  }

  emit(stage: AuditStage, code?: number, impersonated?: UserInfo): void {
    if (this.config.omitStages.includes(stage)) return;
    this.sink(this.event(stage, code, impersonated));
  }

  private event(stage: AuditStage, code: number | undefined, impersonated: UserInfo | undefined): AuditEvent {
    const info = this.info;
    const e: AuditEvent = {
      kind: 'Event', apiVersion: auditApiVersion, level: this.config.level, auditID: this.id, stage,
      requestURI: this.req.url ?? '/', verb: info.verb, user: this.user,
      sourceIPs: sourceIPs(this.req),
      requestReceivedTimestamp: microTime(this.received), stageTimestamp: microTime(Date.now()),
    };
    if (impersonated) e.impersonatedUser = impersonated;
    const agent = this.req.headers['user-agent'];
    if (agent) e.userAgent = agent;
    if (info.isResourceRequest) {
      const ref: Record<string, string> = {};
      if (info.resource) ref.resource = info.resource;
      if (info.namespace) ref.namespace = info.namespace;
      if (info.name) ref.name = info.name;
      ref.apiGroup = info.apiGroup;
      ref.apiVersion = info.apiVersion;
      if (info.subresource) ref.subresource = info.subresource;
      e.objectRef = ref;
    }
    if (code !== undefined) {
      const status: Record<string, unknown> = { metadata: {}, code };
      if (this.failure) {
        const s = this.failure.toStatus();
        status.status = s.status;
        if (s.message) status.message = s.message;
        if (s.reason) status.reason = s.reason;
        if (s.details) status.details = s.details;
      }
      e.responseStatus = status;
    }
    if (this.requestBody && this.requestBody.length) {
      // Parsed once for all the stages.
      if (this.requestObject === undefined) {
        const parsed = parsedJson(this.requestBody, this.req.headers['content-type'] ?? 'application/json');
        this.requestObject = this.config.omitManagedFields ? withoutManagedFields(parsed) : parsed;
      }
      const obj = this.requestObject;
      if (obj !== undefined) e.requestObject = obj;
      // As upstream, a create names its object from the body.
      const name = (obj as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
      if (e.objectRef && e.objectRef.name === undefined && typeof name === 'string' && name) e.objectRef.name = name;
    }
    if (this.responseChunks && stage !== 'ResponseStarted') {
      const obj = parsedJson(Buffer.concat(this.responseChunks), undefined);
      if (obj !== undefined) e.responseObject = this.config.omitManagedFields ? withoutManagedFields(obj) : obj;
    }
    if (this.annotations.size) {
      const annotations: Record<string, string> = {};
      let any = false;
      for (const [key, a] of this.annotations) {
        if (!levelAtLeast(this.config.level, a.level)) continue;
        setOwn(annotations, key, a.value);
        any = true;
      }
      if (any) e.annotations = annotations;
    }
    return e;
  }
}
