// The aggregator: the group versions APIServices hand to other servers,
// proxied to them (see proxy.ts), listed in discovery beside ours, and their
// OpenAPI documents served beside ours. What a backend serves is fetched in
// the background (at each change of its APIService and every minute, as
// upstream's discovery manager does), so a dead backend never slows a
// request for another group or for discovery: its group answers 503, the
// rest of the API as before.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../../api/kind.js';
import { availableCondition } from '../../api/apiregistration/v1/apiservice.js';
import type { InformerFactory, InformerSubscription } from '../../client/informer.js';
import { resources, resourceType } from '../../client/resources.js';
import type { ApiClient } from '../../client/types.js';
import { errors } from '../../machinery/errors.js';
import { compareVersionPriority } from '../../machinery/versionpriority.js';
import type { UserInfo } from '../../machinery/user.js';
import { AggregatorProxy, type ProxyIdentity } from './proxy.js';
import { upgradeOf } from '../connection.js';
import { BackendUnavailable, resolveBackend, type BackendTarget, type ServiceObjects } from './backends.js';
import type { ProbeResult } from '../../controllers/apiservices.js';

/** How often a backend's discovery and OpenAPI are fetched again. */
const refreshMs = 60_000;
const fetchTimeoutMs = 5_000;
/** Who this server's own discovery fetches act as (upstream's aggregator uses its own identity). */
const aggregatorUser: UserInfo = { username: 'system:kube-aggregator', groups: ['system:masters'] };

interface Remote {
  apiService: KubeObject;
  group: string;
  version: string;
  /** The backend's resource list of the group version, once fetched; kept when a later fetch fails (then stale). */
  resources?: KubeObject;
  stale: boolean;
  /** The backend's OpenAPI v3 document of the group version, once fetched. */
  openapiV3?: Buffer;
  /** The backend's OpenAPI v2 document (all it serves), once fetched. */
  openapiV2?: Record<string, any>;
  timer?: NodeJS.Timeout;
}

export interface AggregatorOptions {
  identity: ProxyIdentity;
  /** --enable-aggregator-routing: dial the Service's endpoints instead of its address. */
  routeToEndpoints: boolean;
  /** Whether this server serves the group version itself (then no APIService hands it away). */
  servedHere(group: string, version: string): boolean;
  log: (message: string, extra?: object) => void;
}


export class Aggregator {
  private readonly remotes = new Map<string, Remote>();
  private readonly proxy: AggregatorProxy;
  private subscriptions: InformerSubscription[] = [];
  private services?: InformerSubscription;
  private endpoints?: InformerSubscription;
  /** Moves when the remote group versions change (discovery and OpenAPI caches key on it). */
  generation = 0;
  private stopped = false;
  /** Told of a backend the proxy could not reach, or whose Service changed, so that its availability is checked again at once. */
  recheck?: (apiService: KubeObject) => void;

  constructor(private readonly options: AggregatorOptions) {
    this.proxy = new AggregatorProxy(options.identity);
  }

  /** Subscribes to APIServices, Services and Endpoints; resolves once they are listed. */
  async start(informers: InformerFactory, client: ApiClient): Promise<void> {
    // A Service or Endpoints an APIService names appearing or changing: fetch its backend's discovery again.
    const changed = (o: KubeObject) => this.serviceChanged(String(o.metadata?.namespace ?? ''), String(o.metadata?.name ?? ''));
    const handlers = { onAdd: changed, onUpdate: (_old: KubeObject, o: KubeObject) => changed(o), onDelete: changed };
    this.services = informers.subscribe(resourceType(client, resources.services), handlers);
    this.endpoints = informers.subscribe(resourceType(client, resources.endpoints), handlers);
    const apiServices = informers.subscribe(resourceType(client, resources.apiServices), {
      onAdd: (o) => this.put(o), onUpdate: (_old, o) => this.put(o), onDelete: (o) => this.remove(o),
    });
    this.subscriptions = [this.services, this.endpoints, apiServices];
    await Promise.all(this.subscriptions.map((s) => s.start()));
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.subscriptions) s.stop();
    for (const remote of this.remotes.values()) clearTimeout(remote.timer);
    this.proxy.close();
  }

  private readonly objects: ServiceObjects = {
    service: (namespace, name) => this.services?.get(namespace, name) as KubeObject | undefined,
    endpoints: (namespace, name) => this.endpoints?.get(namespace, name) as KubeObject | undefined,
  };

  private put(apiService: KubeObject): void {
    const key = String(apiService.metadata?.name ?? '');
    const old = this.remotes.get(key);
    if (old) clearTimeout(old.timer);
    if (!apiService.spec?.service) {
      if (old) { this.remotes.delete(key); this.generation++; }
      return;
    }
    const remote: Remote = { apiService, group: String(apiService.spec.group ?? ''), version: String(apiService.spec.version ?? ''), stale: true };
    // What was fetched for the same backend stays until the next fetch says otherwise.
    if (old && JSON.stringify(old.apiService.spec) === JSON.stringify(apiService.spec)) {
      remote.resources = old.resources;
      remote.openapiV3 = old.openapiV3;
      remote.openapiV2 = old.openapiV2;
      remote.stale = old.stale;
    }
    this.remotes.set(key, remote);
    this.generation++;
    void this.refresh(remote);
  }

  private remove(apiService: KubeObject): void {
    const key = String(apiService.metadata?.name ?? '');
    const old = this.remotes.get(key);
    if (!old) return;
    clearTimeout(old.timer);
    this.remotes.delete(key);
    this.generation++;
  }

  private serviceChanged(namespace: string, name: string): void {
    for (const remote of this.remotes.values()) {
      const ref = remote.apiService.spec?.service ?? {};
      if (ref.namespace !== namespace || ref.name !== name) continue;
      void this.refresh(remote);
      this.recheck?.(remote.apiService);
    }
  }

  /** Fetches the backend's resource list and OpenAPI document, then again a minute later. */
  private async refresh(remote: Remote): Promise<void> {
    clearTimeout(remote.timer);
    const path = `/apis/${remote.group}/${remote.version}`;
    try {
      const target = await this.target(remote.apiService);
      const list = await this.proxy.fetch(remote.apiService, target, path, fetchTimeoutMs, aggregatorUser);
      if (list.status !== 200) throw new Error(`HTTP ${list.status} for ${path}`);
      remote.resources = JSON.parse(list.body.toString('utf8'));
      remote.stale = false;
      const openapi = await this.proxy.fetch(remote.apiService, target, `/openapi/v3${path}`, fetchTimeoutMs, aggregatorUser).catch(() => undefined);
      if (openapi?.status === 200) remote.openapiV3 = openapi.body;
      const v2 = await this.proxy.fetch(remote.apiService, target, '/openapi/v2', fetchTimeoutMs, aggregatorUser).catch(() => undefined);
      if (v2?.status === 200) {
        try { remote.openapiV2 = JSON.parse(v2.body.toString('utf8')); } catch { /* a backend without a v2 document in JSON: none merged */ }
      }
      this.generation++;
    } catch (e) {
      if (!remote.stale) this.generation++;
      remote.stale = true;
      this.options.log('could not fetch the discovery of an aggregated API', { apiService: remote.apiService.metadata?.name, err: (e as Error).message });
    }
    if (!this.stopped && this.remotes.get(String(remote.apiService.metadata?.name)) === remote) {
      remote.timer = setTimeout(() => void this.refresh(remote), refreshMs);
      remote.timer.unref();
    }
  }

  /** Where an APIService's backend is; BackendUnavailable when it cannot be dialed. */
  target(apiService: KubeObject): Promise<BackendTarget> {
    return resolveBackend(apiService, this.objects, this.options.routeToEndpoints);
  }

  /** Asks the backend for `path` as this server (the availability controller's probe). */
  probe(apiService: KubeObject, target: BackendTarget, path: string, timeoutMs: number) {
    return this.proxy.fetch(apiService, target, path, timeoutMs, aggregatorUser);
  }

  /** The remote APIService answering a group version, if one does (and this server does not serve it itself). */
  remoteFor(group: string, version: string): KubeObject | undefined {
    if (!group || this.options.servedHere(group, version)) return undefined;
    return this.remotes.get(`${version}.${group}`)?.apiService;
  }

  /** Whether a group is aggregated (some version of it handed to another server). */
  servesGroup(group: string): boolean {
    for (const r of this.remotes.values()) if (r.group === group && !this.options.servedHere(r.group, r.version)) return true;
    return false;
  }

  /**
   * Proxies a request for an aggregated group version, after this server
   * authenticated and authorized it; 503 when its APIService is not
   * available or the backend cannot be reached.
   */
  async serve(req: IncomingMessage, res: ServerResponse, apiService: KubeObject, user: UserInfo): Promise<void> {
    const available = availableCondition(apiService);
    if (available?.status === 'False') {
      throw errors.serviceUnavailable(`service unavailable: ${available.reason ?? ''}: ${available.message ?? ''}`);
    }
    let target: BackendTarget;
    try {
      target = await this.target(apiService);
    } catch (e) {
      if (e instanceof BackendUnavailable) throw errors.serviceUnavailable(`service unavailable: ${e.reason}: ${e.message}`);
      throw e;
    }
    try {
      const upgrade = req.headers.upgrade ? upgradeOf(req) : undefined;
      if (upgrade) await this.proxy.upgrade(req, upgrade, apiService, target, user);
      else await this.proxy.forward(req, res, apiService, target, user);
    } catch (e) {
      this.recheck?.(apiService);
      throw e;
    }
  }

  /** Remote groups by name, each with its versions by upstream's priorities (highest first), for discovery. */
  groups(): { name: string; versions: string[]; priority: number }[] {
    const byGroup = new Map<string, { versions: { version: string; priority: number }[]; priority: number }>();
    for (const r of this.remotes.values()) {
      if (this.options.servedHere(r.group, r.version)) continue;
      let entry = byGroup.get(r.group);
      if (!entry) byGroup.set(r.group, entry = { versions: [], priority: 0 });
      entry.versions.push({ version: r.version, priority: Number(r.apiService.spec?.versionPriority ?? 0) });
      entry.priority = Math.max(entry.priority, Number(r.apiService.spec?.groupPriorityMinimum ?? 0));
    }
    return [...byGroup].sort((a, b) => b[1].priority - a[1].priority || a[0].localeCompare(b[0])).map(([name, e]) => ({
      name, priority: e.priority,
      versions: e.versions.sort((a, b) => b.priority - a.priority || compareVersionPriority(a.version, b.version)).map((v) => v.version),
    }));
  }

  /** The backend's resource list of a group version as last fetched, and whether that fetch is out of date. */
  resourcesOf(group: string, version: string): { list: KubeObject; stale: boolean } | undefined {
    const remote = this.remotes.get(`${version}.${group}`);
    return remote?.resources ? { list: remote.resources, stale: remote.stale } : undefined;
  }

  /**
   * What the backends' OpenAPI v2 documents say of their own group versions:
   * the paths under `/apis/<group>/<version>` and every definition, to merge
   * into ours (ours win a name both have), as upstream's aggregator merges them.
   */
  openapiV2(): { paths: Record<string, unknown>; definitions: Record<string, unknown> } {
    const paths: Record<string, unknown> = Object.create(null);
    const definitions: Record<string, unknown> = Object.create(null);
    for (const r of this.remotes.values()) {
      if (!r.openapiV2 || this.options.servedHere(r.group, r.version)) continue;
      const prefix = `/apis/${r.group}/${r.version}`;
      for (const [path, item] of Object.entries(r.openapiV2.paths ?? {})) if (path === prefix || path.startsWith(`${prefix}/`)) paths[path] = item;
      for (const [name, schema] of Object.entries(r.openapiV2.definitions ?? {})) definitions[name] ??= schema;
    }
    return { paths, definitions };
  }

  /** The backends' OpenAPI v3 documents, by their index key (`apis/<group>/<version>`). */
  openapiV3(): Map<string, Buffer> {
    const docs = new Map<string, Buffer>();
    for (const r of this.remotes.values()) if (r.openapiV3 && !this.options.servedHere(r.group, r.version)) docs.set(`apis/${r.group}/${r.version}`, r.openapiV3);
    return docs;
  }
}

/**
 * The availability check of a remote APIService, as upstream's: its Service
 * resolves to a backend, which answers its group version's discovery with a
 * success within 5 s.
 */
export async function probeApiService(aggregator: Aggregator, apiService: KubeObject): Promise<ProbeResult> {
  let target: BackendTarget;
  try {
    target = await aggregator.target(apiService);
  } catch (e) {
    if (e instanceof BackendUnavailable) return { available: false, reason: e.reason, message: e.message };
    throw e;
  }
  const url = `https://${target.host}:${target.port}/apis/${apiService.spec?.group}/${apiService.spec?.version}`;
  try {
    const answer = await aggregator.probe(apiService, target, new URL(url).pathname, fetchTimeoutMs);
    if (answer.status >= 200 && answer.status < 300) return { available: true };
    return { available: false, reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: bad status from ${url}: ${answer.status}` };
  } catch (e) {
    return { available: false, reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: ${(e as Error).message}` };
  }
}
