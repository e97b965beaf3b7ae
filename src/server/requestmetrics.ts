// The request, watch and storage metrics of upstream's API server, under the
// names existing dashboards query. Label values come from the request info
// and from what the server serves, never from arbitrary user input: a
// resource the server does not serve is labelled with empty strings, a
// non-resource path by its first segment when it is one the server has, so
// the number of series stays bounded. Per-label children are kept, so that a
// request costs a few map lookups and no label hashing.

import { declareMetric } from '../machinery/metricdeclaration.js';
import type { ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, type Registry as MetricsRegistry } from 'prom-client';
import type { KindDefinition } from '../api/kind.js';
import type { Registry } from '../registry/registry.js';
import type { Backend } from '../storage/index.js';
import type { Filter, RequestContext } from './filters.js';
import type { InflightGate } from './inflight.js';
import type { RequestInfo } from './requestinfo.js';
import { whenAnswered } from './answered.js';
import { CounterSeries, HistogramSeries } from '../machinery/metricseries.js';

const durationBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const sizeBuckets = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
const storageBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const requestLabels = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
const component = 'apiserver';

/** Non-resource paths labelled by their first segment; any other is labelled empty. */
const knownNonResource = new Set(['api', 'apis', 'healthz', 'livez', 'readyz', 'metrics', 'version', 'openapi']);

/** Upstream's verb label: LIST, WATCH, APPLY for server-side apply, else the HTTP method's name. */
export function verbLabel(ctx: RequestContext, info: RequestInfo): string {
  if (!info.isResourceRequest) return (ctx.req.method ?? 'GET').toUpperCase();
  switch (info.verb) {
    case 'get': return 'GET';
    case 'list': return 'LIST';
    case 'watch': return 'WATCH';
    case 'create': return 'POST';
    case 'update': return 'PUT';
    case 'patch': return ctx.req.headers['content-type']?.startsWith('application/apply-patch') ? 'APPLY' : 'PATCH';
    case 'delete': return 'DELETE';
    case 'deletecollection': return 'DELETECOLLECTION';
    default: return (ctx.req.method ?? 'GET').toUpperCase();
  }
}

/**
 * Upstream's dry_run label: empty without the parameter, the distinct values
 * sorted and joined when each is one upstream knows (All), else `invalid`.
 */
export function dryRunLabel(query: URLSearchParams): string {
  if (!query.has('dryRun')) return '';
  const values = query.getAll('dryRun');
  if (!values.every((v) => v === 'All')) return 'invalid';
  return [...new Set(values)].sort().join(',');
}

/** Upstream's scope label. */
function scopeLabel(info: RequestInfo): string {
  if (!info.isResourceRequest) return '';
  if (info.name !== undefined || info.verb === 'create') return 'resource';
  return info.namespace !== undefined ? 'namespace' : 'cluster';
}

interface Series {
  total: Map<number, CounterSeries>;
  labels: Record<string, string>;
  duration: HistogramSeries;
  size: HistogramSeries;
  longRunning: Gauge.Internal<string>;
}

export class RequestMetrics {
  private readonly total: Counter;
  private readonly duration: Histogram;
  private readonly sizes: Histogram;
  private readonly longRunning: Gauge;
  private readonly watchEvents: Counter;
  private readonly watchers: Gauge;
  private readonly storage: Histogram;
  private readonly series = new Map<string, Series>();
  /** Key roots of the served kinds, for the storage metric's `type`, by registry generation. */
  private roots = { generation: -1, types: new Map<string, string>() };

  constructor(metrics: MetricsRegistry, private readonly registry: () => Registry | undefined, gate: InflightGate, backend: () => Backend | undefined) {
    this.total = new Counter(declareMetric(metrics, { name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.', labelNames: [...requestLabels, 'dry_run', 'code'], stability: 'STABLE' }));
    this.duration = new Histogram(declareMetric(metrics, { name: 'apiserver_request_duration_seconds', help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.', labelNames: [...requestLabels, 'dry_run'], buckets: durationBuckets, stability: 'STABLE' }));
    this.sizes = new Histogram(declareMetric(metrics, { name: 'apiserver_response_sizes', help: 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.', labelNames: [...requestLabels], buckets: sizeBuckets, stability: 'STABLE' }));
    this.longRunning = new Gauge(declareMetric(metrics, { name: 'apiserver_longrunning_requests', help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.', labelNames: [...requestLabels], stability: 'STABLE' }));
    this.watchEvents = new Counter(declareMetric(metrics, { name: 'apiserver_watch_events_total', help: 'Number of events sent in watch clients', labelNames: ['group', 'version', 'kind'], stability: 'ALPHA' }));
    this.watchers = new Gauge(declareMetric(metrics, { name: 'apiserver_registered_watchers', help: 'Number of currently registered watchers for a given resources', labelNames: ['group', 'version', 'kind'], stability: 'ALPHA' }));
    this.storage = new Histogram(declareMetric(metrics, { name: 'etcd_request_duration_seconds', help: 'Etcd request latency in seconds for each operation and object type.', labelNames: ['operation', 'type'], buckets: storageBuckets, stability: 'ALPHA' }));
    new Gauge(declareMetric(metrics, {
      name: 'apiserver_current_inflight_requests', help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      collect() {
        this.set({ request_kind: 'readOnly' }, gate.readOnly);
        this.set({ request_kind: 'mutating' }, gate.mutating);
      },
      stability: 'STABLE',
    }));
    const objectCounts = async () => this.objectCounts(backend());
    new Gauge(declareMetric(metrics, {
      name: 'apiserver_storage_objects', help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      async collect() {
        for (const [resource, count] of await objectCounts()) this.set({ resource }, count);
      },
      stability: 'STABLE',
    }));
  }

  private seriesFor(ctx: RequestContext): Series {
    const info = ctx.info!;
    const verb = verbLabel(ctx, info);
    let group = '';
    let version = '';
    let resource = '';
    let subresource = '';
    if (info.isResourceRequest) {
      if (this.registry()?.rest(info.apiGroup, info.apiVersion, info.resource!, info.subresource)) {
        group = info.apiGroup;
        version = info.apiVersion;
        resource = info.resource!;
        subresource = info.subresource ?? '';
      }
    } else {
      const first = info.path.split('/', 2)[1] ?? '';
      if (knownNonResource.has(first)) subresource = `/${first}`;
    }
    const scope = scopeLabel(info);
    const dryRun = dryRunLabel(ctx.query);
    const key = `${verb} ${group} ${version} ${resource} ${subresource} ${scope} ${dryRun}`;
    let s = this.series.get(key);
    if (!s) {
      // As upstream, sizes and long-running requests are not split by dry_run.
      const labels = { verb, group, version, resource, subresource, scope, component };
      const withDryRun = { ...labels, dry_run: dryRun };
      s = { labels: withDryRun, total: new Map(), duration: new HistogramSeries(this.duration, withDryRun), size: new HistogramSeries(this.sizes, labels), longRunning: this.longRunning.labels(labels) };
      this.series.set(key, s);
    }
    return s;
  }

  /** After request info: measures the request when its answer is done. */
  filter(): Filter {
    return (ctx, next) => {
      const started = performance.now();
      const res = ctx.res;
      const long = ctx.longRunning === true;
      if (long) this.seriesFor(ctx).longRunning.inc();
      whenAnswered(res, () => this.observe(ctx, res, started, long));
      return next();
    };
  }

  private observe(ctx: RequestContext, res: ServerResponse, started: number, long: boolean): void {
    const s = this.seriesFor(ctx);
    if (long) s.longRunning.dec();
    const code = res.headersSent ? res.statusCode : 0;
    let counter = s.total.get(code);
    if (!counter) {
      counter = new CounterSeries(this.total, { ...s.labels, code: String(code) });
      s.total.set(code, counter);
    }
    counter.inc();
    s.duration.observe((performance.now() - started) / 1000);
    if (s.labels.verb === 'GET' || s.labels.verb === 'LIST') {
      const length = Number(res.getHeader('content-length'));
      if (Number.isFinite(length)) s.size.observe(length);
    }
  }

  /** A watch stream began: count it, and its events, under its kind. */
  watchOpened(kind: KindDefinition): { sent(n: number): void; closed(): void } {
    const labels = { group: kind.group, version: kind.version, kind: kind.kind };
    const events = new CounterSeries(this.watchEvents, labels);
    const watchers = this.watchers.labels(labels);
    watchers.inc();
    return { sent: (n) => events.inc(n), closed: () => watchers.dec() };
  }

  /** The storage observer for `timedBackend`: `type` is the served resource the key belongs to. */
  readonly storageObserver = (operation: string, key: string, seconds: number): void => {
    const type = this.storageType(key);
    const id = `${operation} ${type}`;
    let child = this.storageChildren.get(id);
    if (!child) {
      child = new HistogramSeries(this.storage, { operation, type });
      this.storageChildren.set(id, child);
    }
    child.observe(seconds);
  };

  private readonly storageChildren = new Map<string, HistogramSeries>();

  /** Key root -> `plural` or `plural.group`, for the kinds served now. */
  private rootTypes(): Map<string, string> {
    const registry = this.registry();
    if (!registry) return this.roots.types;
    if (this.roots.generation !== registry.generation) {
      const types = new Map<string, string>();
      for (const k of registry.kinds) types.set(k.group ? `/registry/${k.group}/${k.plural}/` : `/registry/${k.plural}/`, k.group ? `${k.plural}.${k.group}` : k.plural);
      this.roots = { generation: registry.generation, types };
    }
    return this.roots.types;
  }

  /** Keys are /registry/<resource>/... or /registry/<group>/<resource>/...: two lookups at most. */
  private storageType(key: string): string {
    const types = this.rootTypes();
    const first = key.indexOf('/', '/registry/'.length);
    if (first < 0) return '';
    const second = key.indexOf('/', first + 1);
    return (second >= 0 ? types.get(key.slice(0, second + 1)) : undefined) ?? types.get(key.slice(0, first + 1)) ?? '';
  }

  private async objectCounts(backend: Backend | undefined): Promise<[string, number][]> {
    if (!backend) return [];
    const counts: [string, number][] = [];
    for (const [root, type] of this.rootTypes()) {
      try {
        counts.push([type, (await backend.range(root, { limit: 1 })).count]);
      } catch {
        // An unreachable store leaves the last figures; /readyz says it is down.
      }
    }
    return counts;
  }
}
