// The filter chain of DESIGN.md: small functions (ctx, next) run in order
// before the handler. A filter never reaches past its neighbour.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, errors, isApiError } from '../machinery/errors.js';
import type { UserInfo } from '../machinery/user.js';
import type { UnionAuthenticator } from '../auth/authn/authenticator.js';
import type { Authorizer } from '../auth/authz/authorizer.js';
import { parseRequestInfo, RequestInfo } from './requestinfo.js';
import { respondError, Representation } from './representation.js';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  query: URLSearchParams;
  info?: RequestInfo;
  user?: UserInfo;
  /** Set once a handler negotiated the answer's form, so errors come in it too. */
  representation?: Representation;
}

export type Next = () => Promise<void>;
export type Filter = (ctx: RequestContext, next: Next) => Promise<void>;

export function chain(filters: Filter[], handler: (ctx: RequestContext) => Promise<void>): (ctx: RequestContext) => Promise<void> {
  return filters.reduceRight<(ctx: RequestContext) => Promise<void>>(
    (next, filter) => (ctx) => filter(ctx, () => next(ctx)),
    handler,
  );
}

/** Turns any failure into a Status; an unexpected one is a 500 and a log line, never a crash. */
export function recovery(log: Logger): Filter {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      let err: ApiError;
      if (isApiError(e)) err = e;
      else {
        log.error({ err: e, method: ctx.req.method, path: ctx.path }, 'request failed unexpectedly');
        err = errors.internal('the server could not complete the request');
      }
      if (!ctx.res.headersSent) respondError(ctx.res, err, ctx.representation);
      else ctx.res.destroy();
    }
  };
}

/** Request info; `namespaceSubresources` answers the sub-resources a namespace object has now. */
export function requestInfo(namespaceSubresources: () => ReadonlySet<string>): Filter {
  return async (ctx, next) => {
    ctx.info = parseRequestInfo(ctx.req.method ?? 'GET', ctx.path, ctx.query, namespaceSubresources());
    await next();
  };
}

/** 401 for a request no authenticator accepts; the client learns nothing of which one refused or why (the log does). */
export function authentication(authenticator: UnionAuthenticator, log?: Logger): Filter {
  return async (ctx, next) => {
    const result = await authenticator.authenticate(ctx.req);
    if (result.kind !== 'user') {
      if (result.kind === 'rejected') log?.debug({ reason: result.reason, path: ctx.path }, 'unable to authenticate the request');
      throw errors.unauthorized();
    }
    ctx.user = result.user;
    await next();
  };
}

function forbiddenMessage(info: RequestInfo, user: UserInfo): string {
  if (!info.isResourceRequest) return `User "${user.username}" cannot ${info.verb} path "${info.path}"`;
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  let m = `User "${user.username}" cannot ${info.verb} resource "${resource}" in API group "${info.apiGroup}"`;
  m += info.namespace ? ` in the namespace "${info.namespace}"` : ' at the cluster scope';
  return m;
}

export function authorization(authorizer: Authorizer): Filter {
  return async (ctx, next) => {
    const info = ctx.info!;
    const user = ctx.user!;
    const d = await authorizer.authorize({
      user, verb: info.verb, isResourceRequest: info.isResourceRequest, path: info.path,
      apiGroup: info.apiGroup, apiVersion: info.apiVersion, resource: info.resource,
      subresource: info.subresource, namespace: info.namespace, name: info.name,
    });
    if (d.decision !== 'allow') {
      const why = forbiddenMessage(info, user) + (d.reason ? `: ${d.reason}` : '');
      if (!info.isResourceRequest) throw new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
      throw errors.forbidden({ group: info.apiGroup, resource: info.resource ?? '' }, info.name, why);
    }
    await next();
  };
}
