// The APIService controllers every server runs, as upstream's aggregator
// runs them in each API server (not in the controller manager):
// - registration: every group version this server serves, built-in or of a
//   custom resource, has a local APIService (no service), always available,
//   labelled as automanaged; one whose group version is no longer served
//   goes (upstream's autoregister and CRD registration controllers);
// - availability: a remote APIService's backend is probed (resolved, then
//   asked for its group version's discovery, as upstream's availability
//   controller) at every change and every 30 s, and its `Available`
//   condition says what was found, with upstream's reasons.

import { deepEqual } from '../machinery/equal.js';
import { rfc3339Now } from '../machinery/time.js';
import { product, vocabulary } from '../machinery/vocabulary.js';
import { ApiCallError, type ApiClient, type ApiObject } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

const automanaged = vocabulary.apiServiceAutomanagedLabel;

/**
 * Upstream's priorities of the built-in groups (kube-apiserver's
 * apiVersionPriorities), by group prefix: discovery lists groups and
 * versions in this order. A group not here is a custom resource's.
 */
const builtinPriorities: Readonly<Record<string, { group: number; versions: Readonly<Record<string, number>> }>> = {
  '': { group: 18000, versions: { v1: 1 } },
  apps: { group: 17800, versions: { v1: 15 } },
  events: { group: 17750, versions: { v1: 15 } },
  authentication: { group: 17700, versions: { v1: 15 } },
  authorization: { group: 17600, versions: { v1: 15 } },
  autoscaling: { group: 17500, versions: { v1: 15, v2: 30 } },
  batch: { group: 17400, versions: { v1: 15 } },
  certificates: { group: 17300, versions: { v1: 15 } },
  networking: { group: 17200, versions: { v1: 15 } },
  policy: { group: 17100, versions: { v1: 15 } },
  'rbac.authorization': { group: 17000, versions: { v1: 15 } },
  storage: { group: 16800, versions: { v1: 15, v1beta1: 9 } },
  apiextensions: { group: 16700, versions: { v1: 15 } },
  admissionregistration: { group: 16700, versions: { v1: 15, v1beta1: 12 } },
  scheduling: { group: 16600, versions: { v1: 15 } },
  coordination: { group: 16500, versions: { v1: 15 } },
  node: { group: 16300, versions: { v1: 15 } },
  discovery: { group: 16200, versions: { v1: 15 } },
  flowcontrol: { group: 16100, versions: { v1: 21 } },
  apiregistration: { group: 18000, versions: { v1: 15 } },
};

/** A local APIService's priorities: upstream's table for built-in groups, upstream's CRD registration values otherwise. */
function prioritiesOf(group: string, version: string, versionIndex: number): { groupPriorityMinimum: number; versionPriority: number } {
  const suffix = `.${product.domain}`;
  const prefix = group.endsWith(suffix) ? group.slice(0, -suffix.length) : group;
  const known = builtinPriorities[prefix];
  if (known) return { groupPriorityMinimum: known.group, versionPriority: known.versions[version] ?? Math.max(1, 15 - versionIndex) };
  // Upstream gives a custom resource's group 1000, and its versions 100 down in their order.
  return { groupPriorityMinimum: 1000, versionPriority: Math.max(1, 100 - versionIndex) };
}

const apiServiceName = (group: string, version: string) => `${version}.${group}`;

export class ApiServiceRegistration extends BaseController {
  readonly name = 'apiservice-registration';
  private readonly queue: WorkQueue;
  private readonly apiServices: InformerSubscription;
  private stopListening?: () => void;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue(() => this.sync(), { name: 'apiservice_registration', failure: 'registering local APIServices failed' });
    const changed = () => this.queue.add('all');
    this.apiServices = this.watch(this.resolve(resources.apiServices), { onAdd: changed, onUpdate: changed, onDelete: changed });
  }

  override async start(): Promise<void> {
    await super.start();
    this.stopListening = this.client.onResourcesChanged?.(() => this.queue.add('all'));
    this.queue.add('all');
  }

  override async stop(): Promise<void> {
    this.stopListening?.();
    await super.stop();
  }

  /** Every group version served here, with its index among its group's versions (the versions' order). */
  private served(): Map<string, { group: string; version: string; index: number }> {
    const versionsByGroup = new Map<string, string[]>();
    for (const r of this.client.resources()) {
      const versions = versionsByGroup.get(r.group) ?? [];
      if (!versions.includes(r.version)) versions.push(r.version);
      versionsByGroup.set(r.group, versions);
    }
    const out = new Map<string, { group: string; version: string; index: number }>();
    for (const [group, versions] of versionsByGroup) versions.forEach((version, index) => out.set(apiServiceName(group, version), { group, version, index }));
    return out;
  }

  private async sync(): Promise<void> {
    const type = this.apiServices.type;
    const served = this.served();
    for (const [name, { group, version, index }] of served) {
      const spec = { group, version, ...prioritiesOf(group, version, index) };
      const existing = this.apiServices.get(undefined, name);
      if (existing?.spec?.service) continue; // handed to another server by a user: theirs
      const status = { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: rfc3339Now(), reason: 'Local', message: 'Local APIServices are always available' }] };
      try {
        if (!existing) {
          const created = await this.client.create(type, undefined, { apiVersion: `${vocabulary.apiregistrationGroup}/v1`, kind: 'APIService', metadata: { name, labels: { [automanaged]: 'onstart' } }, spec });
          await this.client.update(type, undefined, { ...created, status }, 'status');
          continue;
        }
        if (!deepEqual(existing.spec, spec)) await this.client.update(type, undefined, { ...existing, spec });
        const available = (existing.status?.conditions ?? []).find((c: ApiObject) => c.type === 'Available');
        if (available?.status !== 'True' || available?.reason !== 'Local') {
          const fresh = await this.client.get(type, undefined, name);
          if (fresh) await this.client.update(type, undefined, { ...fresh, status }, 'status');
        }
      } catch (e) {
        if (e instanceof ApiCallError && (e.code === 409 || e.code === 404)) { this.queue.add('all'); continue; }
        throw e;
      }
    }
    for (const apiService of this.apiServices.list()) {
      const name = String(apiService.metadata?.name ?? '');
      if (!apiService.metadata?.labels?.[automanaged] || apiService.spec?.service || served.has(name)) continue;
      await this.client.delete(type, undefined, name);
    }
  }
}

/** What a probe of a remote APIService's backend found: available, or why not. */
export type ProbeResult = { available: true } | { available: false; reason: string; message: string };

export class ApiServiceAvailability extends BaseController {
  readonly name = 'apiservice-availability';
  private readonly queue: WorkQueue;
  private readonly apiServices: InformerSubscription;
  private timer?: NodeJS.Timeout;

  /** `probe`: resolves and asks the backend (the server's aggregator knows how to reach it). */
  constructor(client: ApiClient, log: Log, kit: KitArgument, private readonly probe: (apiService: ApiObject) => Promise<ProbeResult>, private readonly everyMs = 30_000) {
    super(client, log, kit);
    this.queue = this.workQueue((name) => this.sync(name), { name: 'apiservice_availability', failure: 'checking an APIService failed' });
    const changed = (o: ApiObject) => { if (o.spec?.service) this.queue.add(String(o.metadata?.name)); };
    this.apiServices = this.watch(this.resolve(resources.apiServices), { onAdd: changed, onUpdate: (old, o) => { if (!deepEqual(old.spec, o.spec)) changed(o); } });
  }

  override async start(): Promise<void> {
    await super.start();
    const again = () => {
      for (const o of this.apiServices.list()) if (o.spec?.service) this.queue.add(String(o.metadata?.name));
      this.timer = setTimeout(again, this.everyMs);
      this.timer.unref();
    };
    again();
  }

  override async stop(): Promise<void> {
    clearTimeout(this.timer);
    await super.stop();
  }

  /** Probes an APIService's backend again now (the proxy could not reach it). */
  recheck(apiServiceName: string): void {
    this.queue.add(apiServiceName);
  }

  private async sync(name: string): Promise<void> {
    const apiService = this.apiServices.get(undefined, name);
    if (!apiService?.spec?.service) return;
    const result = await this.probe(apiService);
    const condition = result.available
      ? { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' }
      : { type: 'Available', status: 'False', reason: result.reason, message: result.message };
    const old = (apiService.status?.conditions ?? []).find((c: ApiObject) => c.type === 'Available');
    if (old && old.status === condition.status && old.reason === condition.reason && old.message === condition.message) return;
    // As upstream's SetAPIServiceCondition: the transition time moves only when the status does.
    const lastTransitionTime = old?.status === condition.status ? old.lastTransitionTime : rfc3339Now();
    const others = (apiService.status?.conditions ?? []).filter((c: ApiObject) => c.type !== 'Available');
    try {
      await this.client.update(this.apiServices.type, undefined, { ...apiService, status: { ...apiService.status, conditions: [...others, { ...condition, lastTransitionTime }] } }, 'status');
    } catch (e) {
      if (e instanceof ApiCallError && (e.code === 409 || e.code === 404)) { if (e.code === 409) this.queue.add(name); return; }
      throw e;
    }
  }
}
