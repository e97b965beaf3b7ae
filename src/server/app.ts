// The HTTP application: the filter chain in front of the routes (health,
// version, discovery, OpenAPI, resources).

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errors } from '../machinery/errors.js';
import type { KubeObject } from '../api/kind.js';
import type { UnionAuthenticator } from '../auth/authn/authenticator.js';
import type { Authorizer } from '../auth/authz/authorizer.js';
import type { Registry } from '../registry/registry.js';
import { authentication, authorization, chain, impersonation, recovery, RequestContext, requestInfo } from './filters.js';
import type { RequestInfo } from './requestinfo.js';
import { productGroupForUpstream } from '../machinery/vocabulary.js';
import { aggregatedFormAsked, Discovery, versionInfo } from './discovery.js';
import type { Health } from './health.js';
import { negotiate, plainJson, respond, respondError, sendBytes } from './representation.js';
import { serveResource } from './handlers/resources.js';
import { queryBool } from './params.js';
import { InflightGate, markLongRunning, requestTimeout } from './inflight.js';
import type { RequestMetrics } from './requestmetrics.js';
import type { Auditor } from './audit/index.js';
import type { Lifecycle } from './lifecycle.js';
import { requestLog } from './requestlog.js';
import { nowMicros } from '../machinery/time.js';
import type { IssuerDiscoveryHandler } from './issuerdiscovery.js';
import type { DeprecatedApis } from './deprecation.js';
import type { FeatureGates } from '../machinery/featuregates.js';
import type { Aggregator } from './aggregator/index.js';

export interface AppParts {
  registry: Registry;
  health: Health;
  authenticator: UnionAuthenticator;
  authorizer: Authorizer;
  log: Logger;
  packageVersion: string;
  /** Answers OpenAPI paths; false when the path is not one. */
  openapi?: (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => boolean;
  /** host:port clients reach the server at, for /api's serverAddressByClientCIDRs. */
  serverAddress: () => string;
  /** Answers the service-account issuer discovery documents; false for other paths. */
  issuerDiscovery?: IssuerDiscoveryHandler;
  /** Answers /metrics. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** In-flight limits (absent: none). */
  inflight?: InflightGate;
  /** Longest a request that is not long-running may take before 504. */
  requestTimeoutMs?: number;
  requestMetrics?: RequestMetrics;
  auditor?: Auditor;
  lifecycle?: Lifecycle;
  /** One log line per request (-v 3). */
  logRequests?: boolean;
  /** The feature gates of this start (absent: upstream's defaults). */
  features?: FeatureGates;
  /** Signals requests to deprecated versions (Warning, audit annotations, gauge). */
  deprecatedApis?: DeprecatedApis;
  /** Group versions other servers answer (APIServices): proxied after authorization, listed in discovery. */
  aggregator?: Aggregator;
}

/**
 * A plain request target (unreserved characters in the path, no dot
 * segment, no doubled slash; a query of ordinary pairs) is already what URL
 * would normalize it to, and that parse is a measurable part of a request.
 * Each segment begins with its slash and each dot-part with its dot, so the
 * pattern matches or fails in one pass (no nested choice to backtrack into).
 */
const plainTarget = /^(?:\/[A-Za-z0-9_~-]+(?:\.[A-Za-z0-9_~-]*)*)*\/?(?:\?[A-Za-z0-9_~.%=&+:,-]*)?$/;
/** Longer targets take URL's road (the pattern is linear, but there is no reason to test it on kilobytes). */
const plainTargetMax = 2048;

/** The decoded path and the query of a request target. */
export function splitTarget(target: string): { path: string; query: URLSearchParams } {
  if (target.length <= plainTargetMax && plainTarget.test(target)) {
    const q = target.indexOf('?');
    return q < 0 ? { path: target, query: new URLSearchParams() } : { path: target.slice(0, q), query: new URLSearchParams(target.slice(q + 1)) };
  }
  const url = new URL(target, 'https://localhost');
  return { path: decodeURIComponent(url.pathname), query: url.searchParams };
}

export function createApp(parts: AppParts): (req: IncomingMessage, res: ServerResponse) => void {
  const registry = parts.registry;
  const discovery = new Discovery(registry, { storageVersionHash: parts.features?.enabled('StorageVersionHash') ?? true }, parts.aggregator);
  let namespaceSubresources = { generation: -1, names: new Set<string>() };
  const namespaceSubresourcesNow = () => {
    if (namespaceSubresources.generation !== registry.generation) {
      namespaceSubresources = { generation: registry.generation, names: registry.subresourcesOf('', 'v1', 'namespaces') };
    }
    return namespaceSubresources.names;
  };

  const route = async (ctx: RequestContext): Promise<void> => {
    const { req, res, path, query } = ctx;
    const info = ctx.info!;
    if (await parts.health.serve(path, query, res)) return;
    if (parts.openapi?.(req, res, path, query)) return;
    if (path === '/metrics' && parts.metrics) return parts.metrics(req, res);
    if (parts.issuerDiscovery?.(req, res, path)) return;
    const method = req.method ?? 'GET';
    const pretty = queryBool(query, 'pretty') ?? false;
    const readOnly = (doc: unknown) => {
      if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed();
      if (doc === undefined) throw errors.noSuchResource();
      respond(res, 200, doc as KubeObject, negotiate(req.headers.accept, { protobuf: false, views: false }), { pretty });
    };
    if (path === '/version' || path === '/version/') {
      if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed();
      // Upstream writes the version indented, whatever was asked, and with no newline after it (not its object encoder).
      return sendBytes(res, 200, Buffer.from(JSON.stringify(versionInfo(parts.packageVersion), null, 2)), 'application/json');
    }
    const root = path === '/api' || path === '/api/' ? 'api' : path === '/apis' || path === '/apis/' ? 'apis' : undefined;
    if (root !== undefined) {
      const aggregated = aggregatedFormAsked(req.headers.accept);
      if (aggregated) {
        if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed();
        return respond(res, 200, discovery.aggregated(root, aggregated.apiVersion), { ...plainJson, contentType: aggregated.contentType }, { pretty });
      }
      return readOnly(root === 'api' ? discovery.apiVersions(parts.serverAddress()) : discovery.apiGroupList());
    }
    // An aggregated group version: its server answers, for the user authenticated and authorized here.
    if (parts.aggregator && info.apiPrefix === 'apis' && info.apiVersion) {
      const remote = parts.aggregator.remoteFor(info.apiGroup, info.apiVersion);
      if (remote) return parts.aggregator.serve(req, res, remote, ctx.user!);
    }
    const segments = path.split('/').filter(Boolean);
    if (segments[0] === 'apis' && segments.length === 2) return readOnly(discovery.apiGroup(segments[1]));
    if (info.apiPrefix && !info.isResourceRequest && info.parts.length === 0) {
      return readOnly(discovery.resourceList(info.apiGroup, info.apiVersion));
    }
    if (info.isResourceRequest) {
      if (info.apiPrefix === 'api' && info.apiGroup !== '') throw errors.noSuchResource();
      return serveResource(parts.registry, ctx, parts.deprecatedApis && ((rest, scope) => parts.deprecatedApis!.observe(rest, scope)));
    }
    throw errors.noSuchResource();
  };

  // Typed upstream clients put upstream group names in paths (kubectl auth whoami posts to
  // authentication.k8s.io): a resource we serve under our name answers them, unless the name itself is served.
  const upstreamAlias = (info: RequestInfo): string | undefined => {
    if (!info.isResourceRequest || info.apiPrefix !== 'apis' || info.resource === undefined) return undefined;
    if (registry.rest(info.apiGroup, info.apiVersion, info.resource, info.subresource)) return undefined;
    const ours = productGroupForUpstream(info.apiGroup);
    return ours !== undefined && registry.rest(ours, info.apiVersion, info.resource, info.subresource) ? ours : undefined;
  };

  // DESIGN.md's order; the measuring filters and the timeout come before authentication, which may be slow too.
  const optional = <T>(value: T | undefined | false): T[] => (value ? [value] : []);
  const handle = chain(
    [
      recovery(parts.log),
      requestInfo(namespaceSubresourcesNow, upstreamAlias),
      markLongRunning(),
      ...optional(parts.requestMetrics?.filter()),
      ...optional(parts.logRequests && requestLog(parts.log)),
      ...optional(parts.lifecycle?.retryAfterFilter()),
      ...optional(parts.requestTimeoutMs !== undefined && requestTimeout(parts.requestTimeoutMs)),
      authentication(parts.authenticator, parts.log, parts.auditor?.authenticated),
      impersonation(parts.authorizer),
      ...optional(parts.inflight?.filter()),
      authorization(parts.authorizer),
    ],
    route,
  );
  const watchHooks = parts.lifecycle?.watchHooks;

  return (req, res) => {
    // Every answer names its audit ID, the client's own when it sent one (as upstream).
    const sent = req.headers['audit-id'];
    const auditID = typeof sent === 'string' && sent !== '' ? sent : randomUUID();
    res.setHeader('Audit-Id', auditID);
    parts.lifecycle?.track(res);
    let path: string;
    let query: URLSearchParams;
    try {
      ({ path, query } = splitTarget(req.url ?? '/'));
    } catch {
      respondError(res, errors.badRequest(`malformed request path: ${JSON.stringify(req.url)}`));
      return;
    }
    void handle({ req, res, path, query, auditID, watchHooks, receivedMicros: parts.auditor ? nowMicros() : undefined });
  };
}
