// The HTTP side of the server, put together: the filters and handlers
// (server/app.ts) over the registry, OpenAPI (with what aggregated servers
// publish), issuer discovery, /metrics, the health checks' last one
// (`shutdown`), and the HTTPS listener, closed with the rest.

import type { Logger } from 'pino';
import type { FeatureGates } from '../machinery/featuregates.js';
import type { KeyMaterial } from '../pki/index.js';
import type { Registry } from '../registry/registry.js';
import type { UnionAuthenticator } from '../auth/authn/authenticator.js';
import type { Authorizer } from '../auth/authz/authorizer.js';
import { createApp } from '../server/app.js';
import type { Aggregator } from '../server/aggregator/index.js';
import type { Auditor } from '../server/audit/index.js';
import { DeprecatedApis } from '../server/deprecation.js';
import { versionInfo } from '../server/discovery.js';
import type { Health } from '../server/health.js';
import type { InflightGate } from '../server/inflight.js';
import { issuerDiscovery, issuerDiscoveryProblem, type IssuerDiscoveryHandler } from '../server/issuerdiscovery.js';
import type { Lifecycle } from '../server/lifecycle.js';
import type { HttpsListener } from '../server/listener.js';
import type { Metrics } from '../server/metrics.js';
import { OpenApiService } from '../server/openapi/index.js';
import type { ServerOptions } from '../server/options.js';
import type { RequestMetrics } from '../server/requestmetrics.js';
import type { Closers } from './closers.js';
import { packageVersion } from './version.js';

export interface HttpInputs {
  options: ServerOptions;
  log: Logger;
  closers: Closers;
  listener: HttpsListener;
  registry: Registry;
  health: Health;
  authenticator: UnionAuthenticator;
  authorizer: Authorizer;
  aggregator: Aggregator;
  metrics: Metrics;
  gate: InflightGate;
  requestMetrics: RequestMetrics;
  auditor: Auditor | undefined;
  lifecycle: Lifecycle;
  features: FeatureGates;
  keys: KeyMaterial;
}

/** Builds the app and listens; resolves once the server listens. */
export async function serveHttp(p: HttpInputs): Promise<void> {
  const { options, log, listener, aggregator, lifecycle, closers } = p;
  p.health.add({ name: 'shutdown', check: () => { if (closers.closing || lifecycle.shuttingDown) throw new Error('server is shutting down'); } }, ['readyz']);
  const version = await packageVersion();
  const openapi = new OpenApiService(p.registry, { version: versionInfo(version).gitVersion, remote: { get generation() { return aggregator.generation; }, documents: () => aggregator.openapiV3(), v2: () => aggregator.openapiV2() } });
  // As upstream: a bad issuer for discovery is a warning, not a failed start.
  const discoveryProblem = issuerDiscoveryProblem(options.serviceAccountIssuer[0]!, options.serviceAccountJwksUri);
  if (discoveryProblem) log.warn(`service account issuer discovery is not served: ${discoveryProblem}`);
  let discoveryHandler: IssuerDiscoveryHandler | undefined;
  const app = createApp({
    aggregator,
    registry: p.registry, health: p.health, authenticator: p.authenticator, authorizer: p.authorizer, log,
    packageVersion: version,
    openapi: (req, res, path, query) => openapi.handle(req, res, path, query),
    serverAddress: () => listener.address,
    metrics: (req, res) => p.metrics.serve(req, res),
    issuerDiscovery: (req, res, path) => discoveryHandler?.(req, res, path) ?? false,
    inflight: p.gate,
    requestTimeoutMs: options.requestTimeoutMs,
    requestMetrics: p.requestMetrics,
    auditor: p.auditor,
    lifecycle,
    logRequests: options.verbosity >= 3,
    deprecatedApis: new DeprecatedApis(p.metrics.registry),
    features: p.features,
  });
  await listener.listen(app, options.securePort, options.bindAddress);
  closers.add(() => listener.close());
  if (!discoveryProblem) {
    discoveryHandler = issuerDiscovery({ issuer: options.serviceAccountIssuer[0]!, jwksUri: options.serviceAccountJwksUri, address: listener.address, publicKeyPems: p.keys.serviceAccountPublicKeyPems });
  }
}
