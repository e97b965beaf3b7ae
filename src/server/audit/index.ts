// Auditing: the policy decides each request's level; at any level but None
// the request gets an AuditRecord whose events (RequestReceived,
// ResponseStarted for long-running requests, ResponseComplete or Panic) go to
// the log and webhook backends; a request refused by authentication is audited
// too, as upstream: one ResponseStarted event without a user. The auditor
// follows requests from the moment authentication has decided (its
// listener); without a policy and a backend there is no listener at all, so
// requests pay nothing for it. With a backend in a blocking mode a request
// waits for its RequestReceived event and its answer ends after its final one.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Counter, type Registry } from 'prom-client';
import { declareMetric } from '../../machinery/metricdeclaration.js';
import type { Logger } from 'pino';
import type { ServerOptions } from '../options.js';
import { readKubeconfigEndpoint } from '../../client/kubeconfig.js';
import type { AuthenticatedListener, RequestContext } from '../filters.js';
import type { UserInfo } from '../../machinery/user.js';
import { AuditRecord, type AuditSink } from './event.js';
import { LogBackend } from './log.js';
import { AuditConfigError, PolicyChecker, readPolicyFile } from './policy.js';
import { WebhookBackend } from './webhook.js';
import { whenAnswered } from '../answered.js';

export { AuditConfigError } from './policy.js';

/** The user of an event for a request no authenticator accepted. */
const noUser: UserInfo = { username: '', groups: [] };

/** Upstream's message for a request no authenticator accepted: which kinds of credentials it carried. */
function attemptedAuthentication(req: IncomingMessage, query: URLSearchParams): string {
  const tried: string[] = [];
  const authorization = (req.headers.authorization ?? '').trim();
  if (/^basic /i.test(authorization)) tried.push('basic');
  const parts = authorization.split(' ');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') tried.push('bearer');
  if ((query.get('access_token') ?? '').trim() !== '') tried.push('access_token');
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate === 'function' && Object.keys(socket.getPeerCertificate() ?? {}).length > 0) tried.push('x509');
  return tried.length ? `Authentication failed, attempted: ${tried.join(', ')}` : 'Authentication failed, no credentials provided';
}
export type { AuditRecord } from './event.js';

interface Backend {
  /**
   * Takes an event as JSON text, in two parts (see AuditSink); never throws.
   * A blocking backend answers when the event is through (false: it failed and the mode is strict).
   */
  process(head: string, rest?: string): Promise<boolean> | undefined;
  close(): Promise<void>;
}

export class Auditor {
  private readonly errors: Counter;
  /** Failures are logged at most once a second per backend, with how many events were lost since. */
  private readonly lost = new Map<string, { count: number; loggedAt: number }>();

  private constructor(
    private readonly checker: PolicyChecker,
    private readonly backends: Backend[],
    registry: Registry,
    private readonly log: Logger,
    /** A backend blocks: requests wait for their RequestReceived and final events. */
    private readonly blocking: boolean,
  ) {
    // Counted in a plain number and handed to the counter when scraped: nothing per event.
    const count = () => this.eventCount;
    new Counter(declareMetric(registry, {
      name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.',
      collect() {
        this.reset();
        this.inc(count());
      },
    }));
    this.errors = new Counter(declareMetric(registry, { name: 'apiserver_audit_error_total', help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', labelNames: ['plugin'] }));
  }

  /** The auditor the options ask for; undefined without a policy or without any backend. */
  static async create(options: ServerOptions, registry: Registry, log: Logger): Promise<Auditor | undefined> {
    if (!options.auditPolicyFile) return undefined;
    const policy = await readPolicyFile(options.auditPolicyFile);
    let auditor: Auditor | undefined;
    const onError = (plugin: string) => (lost: number, err: unknown) => auditor?.failed(plugin, lost, err);
    const backends: Backend[] = [];
    if (options.auditLogPath) {
      try {
        backends.push(await LogBackend.open({
          path: options.auditLogPath, format: options.auditLogFormat, mode: options.auditLogMode,
          maxAgeDays: options.auditLogMaxAge, maxBackups: options.auditLogMaxBackup, maxSizeMB: options.auditLogMaxSize,
          onError: onError('log'),
        }));
      } catch (e) {
        throw new AuditConfigError(`cannot open the audit log "${options.auditLogPath}": ${(e as Error).message} (--audit-log-path)`);
      }
    }
    if (options.auditWebhookConfigFile) {
      let endpoint;
      try {
        endpoint = await readKubeconfigEndpoint(options.auditWebhookConfigFile);
      } catch (e) {
        throw new AuditConfigError(`audit webhook config file "${options.auditWebhookConfigFile}": ${(e as Error).message}`);
      }
      backends.push(new WebhookBackend({
        endpoint, bufferSize: options.auditWebhookBatchBufferSize, maxBatchSize: options.auditWebhookBatchMaxSize,
        maxWaitMs: options.auditWebhookBatchMaxWaitMs, timeoutMs: 30_000, onError: onError('webhook'),
        initialBackoffMs: options.auditWebhookInitialBackoffMs, mode: options.auditWebhookMode,
        throttle: options.auditWebhookBatchThrottleEnable
          ? { qps: options.auditWebhookBatchThrottleQps, burst: options.auditWebhookBatchThrottleBurst }
          : undefined,
      }));
    }
    if (backends.length === 0) {
      log.warn({ policy: options.auditPolicyFile }, 'an audit policy without --audit-log-path or --audit-webhook-config-file audits nothing');
      return undefined;
    }
    const blocking = (options.auditLogPath !== undefined && options.auditLogMode !== 'batch')
      || (options.auditWebhookConfigFile !== undefined && options.auditWebhookMode !== 'batch');
    auditor = new Auditor(new PolicyChecker(policy), backends, registry, log, blocking);
    return auditor;
  }

  private failed(plugin: string, lost: number, err: unknown): void {
    this.errors.inc({ plugin }, lost);
    const entry = this.lost.get(plugin) ?? { count: 0, loggedAt: 0 };
    entry.count += lost;
    this.lost.set(plugin, entry);
    const now = Date.now();
    if (now - entry.loggedAt < 1000) return;
    this.log.error({ err, plugin, lostEvents: entry.count }, 'audit events could not be written');
    entry.count = 0;
    entry.loggedAt = now;
  }

  private eventCount = 0;

  private sink: AuditSink = (head, rest) => {
    this.eventCount++;
    let waits: Promise<boolean>[] | undefined;
    for (const b of this.backends) {
      const wait = b.process(head, rest);
      if (wait) (waits ??= []).push(wait);
    }
    return waits && Promise.all(waits).then((oks) => oks.every(Boolean));
  };

  /**
   * Told by authentication who sent each request: decides the level and
   * follows the request to its end. A request refused there (401) is audited
   * too, as upstream's failed-authentication audit, with an empty user.
   */
  readonly authenticated: AuthenticatedListener = (ctx, user) => {
    if (ctx.audit !== undefined) return undefined;
    if (user) return this.follow(ctx, user);
    this.failedAuthentication(ctx);
    return undefined;
  };

  /**
   * As upstream's failed-authentication audit: one ResponseStarted event, no
   * user, a status naming the credentials that were tried and the code sent.
   */
  private failedAuthentication(ctx: RequestContext): void {
    const config = this.checker.levelFor(noUser, ctx.info!);
    if (config.level === 'None') return;
    const record = new AuditRecord(config, ctx.auditID ?? '', ctx.req, ctx.info!, noUser, this.sink, ctx.receivedMicros);
    const message = attemptedAuthentication(ctx.req, ctx.query);
    whenAnswered(ctx.res, () => record.emitFailedAuthentication(ctx.res.statusCode, message));
  }

  /**
   * Gives the request a record when its level is not None, and emits its
   * stages as they come; a blocking backend's answer for RequestReceived is
   * the request's to wait for.
   */
  private follow(ctx: RequestContext, user: UserInfo): Promise<boolean> | undefined {
    const info = ctx.info!;
    const config = this.checker.levelFor(user, info);
    if (config.level === 'None') return undefined;
    const record = new AuditRecord(config, ctx.auditID ?? '', ctx.req, info, user, this.sink, ctx.receivedMicros);
    ctx.audit = record;
    ctx.auditAnnotations = record.annotations;
    const received = record.emit('RequestReceived');
    const res = ctx.res;
    let completed = false;
    const complete = (): Promise<boolean> | undefined => {
      completed = true;
      record.failure = ctx.error;
      record.panicked = ctx.panicked ?? false;
      const impersonated = ctx.user !== undefined && ctx.user !== user ? ctx.user : undefined;
      return record.emit(record.panicked ? 'Panic' : 'ResponseComplete', res.statusCode, impersonated);
    };
    // As upstream's blocking backends, the answer ends only once its final event is through (not for streams).
    const endAfterEvent = this.blocking && !ctx.longRunning;
    if (record.wantsResponseBody) {
      const write = res.write;
      res.write = function (this: typeof res, chunk: unknown, ...rest: unknown[]) {
        record.keepResponseChunk(chunk);
        return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
      } as typeof res.write;
    }
    if (record.wantsResponseBody || endAfterEvent) {
      const end = res.end as (...a: unknown[]) => typeof res;
      res.end = function (this: typeof res, chunk?: unknown, ...rest: unknown[]) {
        if (record.wantsResponseBody && typeof chunk !== 'function') record.keepResponseChunk(chunk);
        const through = endAfterEvent && !completed ? complete() : undefined;
        if (!through) return end.call(this, chunk, ...rest);
        void through.then(() => end.call(this, chunk, ...rest));
        return this;
      } as typeof res.end;
    }
    if (ctx.longRunning) {
      const writeHead = res.writeHead;
      res.writeHead = function (this: typeof res, ...args: unknown[]) {
        const out = (writeHead as (...a: unknown[]) => typeof res).apply(this, args);
        record.emit('ResponseStarted', res.statusCode);
        return out;
      } as typeof res.writeHead;
    }
    whenAnswered(res, () => {
      if (!completed) void complete();
    });
    return received;
  }

  /** Writes what is queued and stops. */
  async close(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.close()));
  }
}
