// The filter chain of DESIGN.md: small functions (ctx, next) run in order
// before the handler. A filter never reaches past its neighbour.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, errorInClientGroup, errors, isApiError } from '../machinery/errors.js';
import type { UserInfo } from '../machinery/user.js';
import { anonymousUser, systemGroups } from '../machinery/user.js';
import { ownValue, setOwn } from '../machinery/ownkeys.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { serviceAccountGroups, serviceAccountUsername, splitServiceAccountUsername } from '../machinery/serviceaccount.js';
import type { UnionAuthenticator } from '../auth/authn/authenticator.js';
import type { Attributes, Authorizer, Decision } from '../auth/authz/authorizer.js';
import { parseRequestInfo, RequestInfo } from './requestinfo.js';
import { respondError, Representation } from './representation.js';
import type { AuditAnnotation } from '../admission/types.js';
import type { AuditRecord } from './audit/event.js';
import type { WatchHooks } from './handlers/watch.js';
import { whenAnswered } from './answered.js';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  query: URLSearchParams;
  info?: RequestInfo;
  user?: UserInfo;
  /** Set once a handler negotiated the answer's form, so errors come in it too. */
  representation?: Representation;
  /** For failures after the answer began (a watch stream), which no Status can report any more; set by recovery. */
  log?: Logger;
  /** The request's audit ID: the Audit-Id header of the answer, and of its audit events. */
  auditID?: string;
  /** When the request arrived, in microseconds since the epoch (set while auditing: the event's requestReceivedTimestamp). */
  receivedMicros?: number;
  /** Watches and other streams: no in-flight limit, no timeout. */
  longRunning?: boolean;
  /** The request's audit record, when the policy audits it. */
  audit?: AuditRecord;
  /** Annotations for the audit event (authorization, admission): set only when the request is audited. */
  auditAnnotations?: Map<string, AuditAnnotation>;
  /** Open watch streams are counted and, at shutdown, ended through these. */
  watchHooks?: WatchHooks;
  /**
   * Asks the authorizer about this request with another verb (set by the
   * authorization filter): a handler that needs a second permission asks here.
   */
  authorizeVerb?: (verb: string) => Decision | Promise<Decision>;
  /** The failure the answer reports, set by recovery. */
  error?: ApiError;
  /** The failure was unexpected (a 500 from a bug). */
  panicked?: boolean;
}

export type Next = () => Promise<void>;
export type Filter = (ctx: RequestContext, next: Next) => Promise<void>;

export function chain(filters: Filter[], handler: (ctx: RequestContext) => Promise<void>): (ctx: RequestContext) => Promise<void> {
  return filters.reduceRight<(ctx: RequestContext) => Promise<void>>(
    (next, filter) => (ctx) => filter(ctx, () => next(ctx)),
    handler,
  );
}

/**
 * Turns any failure into a Status; an unexpected one is a 500 and an error
 * line with its stack, never a crash. Every other answer of 5xx (a store that
 * is away, a timeout, a failed health check, an aggregated server's failure)
 * is a warning: audit ID, method, path, status and what failed, never the
 * body or the credentials of the request.
 */
export function recovery(log: Logger): Filter {
  return async (ctx, next) => {
    ctx.log = log;
    whenAnswered(ctx.res, () => logServerError(log, ctx));
    try {
      await next();
    } catch (e) {
      let err: ApiError;
      if (isApiError(e)) err = e;
      else {
        log.error({ err: e, method: ctx.req.method, path: ctx.path, auditID: ctx.auditID }, 'request failed unexpectedly');
        err = errors.internal('the server could not complete the request');
        ctx.panicked = true;
      }
      // A client that named the group by its upstream name reads the failure in that name, as upstream would say it.
      if (ctx.info?.clientGroup !== undefined) err = errorInClientGroup(err, ctx.info.apiGroup, ctx.info.clientGroup);
      ctx.error = err;
      if (!ctx.res.headersSent) respondError(ctx.res, err, ctx.representation);
      else ctx.res.destroy();
    }
  };
}

function logServerError(log: Logger, ctx: RequestContext): void {
  if (ctx.panicked) return; // its error line, with the stack, is out already
  // A failure after the answer began (a stream) ends its connection: the status sent is not what happened.
  const status = ctx.error?.code ?? (ctx.res.headersSent ? ctx.res.statusCode : 0);
  if (status < 500) return;
  const line: Record<string, unknown> = { auditID: ctx.auditID, method: ctx.req.method, path: ctx.path, status };
  if (ctx.error) {
    line.reason = ctx.error.reason;
    line.err = ctx.error.message;
  }
  log.warn(line, 'request answered with a server error');
}

/**
 * Request info; `namespaceSubresources` answers the sub-resources a namespace
 * object has now; `groupAlias` the group that serves a request naming another
 * (an upstream group name), so that authorization and routing see the one served.
 */
export function requestInfo(namespaceSubresources: () => ReadonlySet<string>, groupAlias?: (info: RequestInfo) => string | undefined): Filter {
  return (ctx, next) => {
    const info = parseRequestInfo(ctx.req.method ?? 'GET', ctx.path, ctx.query, namespaceSubresources());
    const alias = groupAlias?.(info);
    if (alias !== undefined) {
      info.clientGroup = info.apiGroup;
      info.apiGroup = alias;
    }
    ctx.info = info;
    return next();
  };
}

/** 401 for a request no authenticator accepts; the client learns nothing of which one refused or why (the log does). */
/**
 * Called once per request with who authentication found, or without a user
 * when it refused or failed (the auditor follows requests from here).
 */
export type AuthenticatedListener = (ctx: RequestContext, user: UserInfo | undefined) => Promise<boolean> | undefined;

export function authentication(authenticator: UnionAuthenticator, log?: Logger, authenticated?: AuthenticatedListener): Filter {
  return async (ctx, next) => {
    let result;
    try {
      const pending = authenticator.authenticate(ctx.req);
      // Most requests are answered at once (a certificate, a token verified before): no await for those.
      result = pending instanceof Promise ? await pending : pending;
    } catch (e) {
      authenticated?.(ctx, undefined);
      throw e;
    }
    if (result.kind !== 'user') {
      if (result.kind === 'rejected') log?.debug({ reason: result.reason, path: ctx.path }, 'unable to authenticate the request');
      authenticated?.(ctx, undefined);
      throw errors.unauthorized();
    }
    ctx.user = result.user;
    const recorded = authenticated?.(ctx, result.user);
    // A blocking audit backend holds the request until its first event is written; a strict one that failed ends it.
    if (recorded && !(await recorded)) throw errors.internal('failed to store audit event');
    await next();
  };
}

/** Upstream's wording of a denial, for the request itself and for each impersonation check. */
function forbiddenMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User "${a.user.username}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  let m = `User "${a.user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}"`;
  m += a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return m;
}

const decisionAnnotation = `${vocabulary.authorizationGroup}/decision`;
const reasonAnnotation = `${vocabulary.authorizationGroup}/reason`;

/** The annotations most requests carry, shared (annotations are read, never changed). */
const allowDecision: AuditAnnotation = Object.freeze({ value: 'allow', level: 'Metadata' });
const forbidDecision: AuditAnnotation = Object.freeze({ value: 'forbid', level: 'Metadata' });
const emptyReason: AuditAnnotation = Object.freeze({ value: '', level: 'Metadata' });

async function authorize(authorizer: Authorizer, attrs: Attributes, annotations?: Map<string, AuditAnnotation>): Promise<void> {
  const d = await authorizer.authorize(attrs);
  if (annotations) {
    // As upstream: the decision and the authorizer's reason (possibly empty), at level Metadata.
    annotations.set(decisionAnnotation, d.decision === 'allow' ? allowDecision : forbidDecision);
    annotations.set(reasonAnnotation, d.reason ? { value: d.reason, level: 'Metadata' } : emptyReason);
  }
  if (d.decision === 'allow') return;
  const why = forbiddenMessage(attrs) + (d.reason ? `: ${d.reason}` : '');
  if (!attrs.isResourceRequest) throw new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
  throw errors.forbidden({ group: attrs.apiGroup, resource: attrs.resource ?? '' }, attrs.name, why);
}

export function authorization(authorizer: Authorizer): Filter {
  return async (ctx, next) => {
    const info = ctx.info!;
    const attrs: Attributes = {
      user: ctx.user!, verb: info.verb, isResourceRequest: info.isResourceRequest, path: info.path,
      apiGroup: info.apiGroup, apiVersion: info.apiVersion, resource: info.resource,
      subresource: info.subresource, namespace: info.namespace, name: info.name ?? info.selectedName,
    };
    if (info.fieldSelector !== undefined) attrs.fieldSelector = info.fieldSelector;
    if (info.labelSelector !== undefined) attrs.labelSelector = info.labelSelector;
    await authorize(authorizer, attrs, ctx.auditAnnotations);
    ctx.authorizeVerb = (verb) => authorizer.authorize({ ...attrs, verb });
    await next();
  };
}

// ---------------------------------------------------------------------------
// Impersonation

const impersonateUser = 'impersonate-user';
const impersonateGroup = 'impersonate-group';
const impersonateUid = 'impersonate-uid';
const impersonateExtraPrefix = 'impersonate-extra-';

/** One thing a request asks to act as, and the resource the authorizer is asked about for it. */
export interface ImpersonationRequest {
  what: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  name: string;
  namespace?: string;
  /** UserExtra: the key. */
  extraKey?: string;
}

/** `Impersonate-Extra-<key>`: lowercase, percent-decoded when it decodes (kept as sent otherwise), as upstream. */
function extraKeyOf(headerName: string): string {
  const key = headerName.slice(impersonateExtraPrefix.length).toLowerCase();
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** The impersonation headers of a request (names lowercase, every value); 400 when groups, extras or a uid come without a user. */
export function impersonationRequests(headers: Readonly<Record<string, string[] | undefined>>): ImpersonationRequest[] {
  const requests: ImpersonationRequest[] = [];
  const user = headers[impersonateUser]?.[0] ?? '';
  if (user) {
    const account = splitServiceAccountUsername(user);
    requests.push(account ? { what: 'ServiceAccount', ...account } : { what: 'User', name: user });
  }
  for (const group of headers[impersonateGroup] ?? []) requests.push({ what: 'Group', name: group });
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith(impersonateExtraPrefix)) continue;
    const extraKey = extraKeyOf(header);
    for (const value of values ?? []) requests.push({ what: 'UserExtra', name: value, extraKey });
  }
  const uid = headers[impersonateUid]?.[0] ?? '';
  if (uid) requests.push({ what: 'UID', name: uid });
  if (!user && requests.length > 0) {
    const asked = requests.map((r) => (r.what === 'UserExtra' ? `UserExtra ${r.extraKey}=${r.name}` : `${r.what} ${r.name}`));
    throw errors.badRequest(`requested [${asked.join(', ')}] without impersonating a user`);
  }
  return requests;
}

/**
 * Whether any header name (the even entries of rawHeaders) begins with
 * `impersonate-`, in any case; true when the raw names are not at hand, so
 * that the headers themselves are read.
 */
function asksImpersonation(rawHeaders: readonly string[] | undefined): boolean {
  if (!Array.isArray(rawHeaders)) return true;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length >= impersonatePrefix.length && name.slice(0, impersonatePrefix.length).toLowerCase() === impersonatePrefix) return true;
  }
  return false;
}

const impersonatePrefix = 'impersonate-';

/** What the authorizer is asked for one impersonation request (verb impersonate, as the spec's table says). */
function impersonationAttributes(requestor: UserInfo, r: ImpersonationRequest, path: string): Attributes {
  const base = { user: requestor, verb: 'impersonate', isResourceRequest: true, path, name: r.name };
  switch (r.what) {
    case 'User': return { ...base, apiGroup: '', apiVersion: 'v1', resource: 'users' };
    case 'ServiceAccount': return { ...base, apiGroup: '', apiVersion: 'v1', resource: 'serviceaccounts', namespace: r.namespace };
    case 'Group': return { ...base, apiGroup: '', apiVersion: 'v1', resource: 'groups' };
    case 'UserExtra': return { ...base, apiGroup: vocabulary.authenticationGroup, apiVersion: 'v1', resource: 'userextras', subresource: r.extraKey };
    case 'UID': return { ...base, apiGroup: vocabulary.authenticationGroup, apiVersion: 'v1', resource: 'uids' };
  }
}

/** The user a request acts as once every impersonation request is allowed. */
export function impersonatedUser(requests: readonly ImpersonationRequest[]): UserInfo {
  let username = '';
  let uid: string | undefined;
  const groups: string[] = [];
  const extra: Record<string, string[]> = {};
  const groupsGiven = requests.some((r) => r.what === 'Group');
  for (const r of requests) {
    if (r.what === 'User') username = r.name;
    else if (r.what === 'ServiceAccount') {
      username = serviceAccountUsername(r.namespace!, r.name);
      // An account's groups follow from its name, unless the caller names groups itself.
      if (!groupsGiven) groups.push(...serviceAccountGroups(r.namespace!));
    } else if (r.what === 'Group') groups.push(r.name);
    else if (r.what === 'UserExtra') setOwn(extra, r.extraKey!, [...(ownValue(extra, r.extraKey!) ?? []), r.name]);
    else uid = r.name;
  }
  if (username === anonymousUser.username) {
    if (!groups.includes(systemGroups.unauthenticated)) groups.push(systemGroups.unauthenticated);
  } else if (!groups.includes(systemGroups.authenticated) && !groups.includes(systemGroups.unauthenticated)) {
    groups.push(systemGroups.authenticated);
  }
  const user: UserInfo = { username, groups };
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length) user.extra = extra;
  return user;
}

/**
 * Impersonation, after authentication: each Impersonate-* header is checked
 * with the authorizer for the authenticated user; when all are allowed the
 * request goes on as the impersonated user, without those headers.
 */
export function impersonation(authorizer: Authorizer): Filter {
  // Most requests impersonate no one: their raw header names say so without building headersDistinct (or a promise).
  return (ctx, next) => (asksImpersonation(ctx.req.rawHeaders) ? impersonate(authorizer, ctx, next) : next());
}

/** The impersonation headers checked, then the request goes on as the user they name. */
async function impersonate(authorizer: Authorizer, ctx: RequestContext, next: Next): Promise<void> {
  const requests = impersonationRequests(ctx.req.headersDistinct);
  if (requests.length === 0) return next();
  for (const r of requests) await authorize(authorizer, impersonationAttributes(ctx.user!, r, ctx.path));
  ctx.user = impersonatedUser(requests);
  const headers = ctx.req.headers;
  for (const name of Object.keys(headers)) {
    if (name === impersonateUser || name === impersonateGroup || name === impersonateUid || name.startsWith(impersonateExtraPrefix)) delete headers[name];
  }
  await next();
}
