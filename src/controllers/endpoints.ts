// The endpoints controller, as upstream's: the core Endpoints of every
// Service with a selector, from the pods it selects. A pod with an address
// goes in `addresses` when it is ready (or the Service publishes not-ready
// addresses), else in `notReadyAddresses`; terminating pods leave unless
// not-ready addresses are published. Each Service port becomes an Endpoints
// port of the same name, its number the pod's (a named targetPort is looked
// up in the pod's containers; a pod without it is left out of that port's
// subset). Services without a selector, and the product's own Service
// (controllers/platservice.ts), are not touched. A Service's Endpoints go
// when the Service goes.

import type { ApiClient, ApiObject } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import { deepEqual } from '../machinery/equal.js';
import { vocabulary } from '../machinery/vocabulary.js';
import type { KitArgument, Log } from './controller.js';
import {
  isHeadless, managedElsewhere, objectKey, podAddressOf, podHostname, podIsEndpoint, podPortFor, podReady, podReference,
  serviceFamilies, ServicePodsController,
} from './endpointpods.js';

type Obj = Record<string, any>;

/** Upstream caps an Endpoints object at 1000 addresses (ready ones first) and says so in an annotation. */
export const maxEndpointsAddresses = 1000;

export class EndpointsController extends ServicePodsController {
  readonly name = 'endpoints';
  protected readonly written: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit, 'endpoint', 'endpoints sync failed');
    // Endpoints changed or removed by someone else are put back; a write this controller lost to a stale cache is made again.
    const endpointsChanged = (ep: ApiObject) => { if (this.services.get(ep.metadata?.namespace, ep.metadata!.name!)) this.queue.add(objectKey(ep)); };
    this.written = this.watch(this.resolve(resources.endpoints), { onAdd: endpointsChanged, onUpdate: (_o, ep) => endpointsChanged(ep), onDelete: endpointsChanged });
  }

  protected async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const service = this.services.get(namespace, name);
    if (!service) {
      this.triggers.take(key);
      // As upstream: the Endpoints of a deleted Service are deleted (one written by hand for no Service stays).
      if (this.written.get(namespace, name)) {
        try { await this.client.delete(this.written.type, namespace, name); } catch (e) { if (!isNotFound(e)) throw e; }
      }
      return;
    }
    if (managedElsewhere(service)) { this.triggers.take(key); return; }
    const { subsets, truncated } = this.subsetsOf(service);
    const current = this.written.get(namespace, name);
    const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
    if (isHeadless(service)) labels[vocabulary.headlessServiceLabel] = '';
    const annotations: Record<string, string> = { ...(current?.metadata?.annotations ?? {}) };
    if (truncated) annotations[vocabulary.endpointsOverCapacityAnnotation] = 'truncated';
    else delete annotations[vocabulary.endpointsOverCapacityAnnotation];
    const unchanged = current && deepEqual(current.subsets ?? [], subsets) && deepEqual(current.metadata?.labels ?? {}, labels)
      && deepEqual(current.metadata?.annotations ?? {}, annotations);
    if (unchanged) { this.triggers.take(key); return; }
    const trigger = this.triggers.take(key);
    if (trigger) annotations[vocabulary.lastChangeTriggerTimeAnnotation] = trigger;
    const metadata = { ...(current?.metadata ?? { name, namespace }), labels, annotations };
    if (Object.keys(annotations).length === 0) delete (metadata as Obj).annotations;
    const body = { apiVersion: 'v1', kind: 'Endpoints', metadata, subsets } as ApiObject;
    try {
      if (current) await this.client.update(this.written.type, namespace, body);
      else await this.client.create(this.written.type, namespace, body);
    } catch (e) {
      // Changed meanwhile: its event brings the key back.
      if (isConflict(e) || isNotFound(e)) return;
      throw e;
    }
  }

  /** The subsets of a Service's Endpoints, packed as upstream's RepackSubsets: addresses grouped by their ports, sorted. */
  private subsetsOf(service: ApiObject): { subsets: Obj[]; truncated: boolean } {
    const publishNotReady = service.spec?.publishNotReadyAddresses === true;
    const family = serviceFamilies(service)[0]!;
    const servicePorts: Obj[] = service.spec?.ports ?? [];
    // Ports (as JSON) -> ready and not-ready addresses.
    const groups = new Map<string, { ports: Obj[]; ready: Obj[]; notReady: Obj[] }>();
    const add = (ports: Obj[], address: Obj, ready: boolean) => {
      const k = JSON.stringify(ports);
      let g = groups.get(k);
      if (!g) groups.set(k, g = { ports, ready: [], notReady: [] });
      (ready ? g.ready : g.notReady).push(address);
    };
    for (const pod of this.selectedPods(service)) {
      if (!podIsEndpoint(pod, publishNotReady)) continue;
      const ip = podAddressOf(pod, family);
      if (!ip) continue;
      const address: Obj = { ip };
      const hostname = podHostname(pod, service);
      if (hostname) address.hostname = hostname;
      if (pod.spec?.nodeName) address.nodeName = pod.spec.nodeName;
      address.targetRef = podReference(pod);
      const ready = publishNotReady || podReady(pod);
      // A headless Service without ports lists addresses without ports.
      if (servicePorts.length === 0) {
        if (isHeadless(service)) add([], address, ready);
        continue;
      }
      for (const sp of servicePorts) {
        const port = podPortFor(pod, sp);
        if (port === undefined) continue;
        const ep: Obj = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
        if (!ep.name) delete ep.name;
        if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
        add([ep], address, ready);
      }
    }
    return packSubsets(groups);
  }
}

/** Subsets of the groups (address group -> its ports): ports merged for the same addresses, sorted, capped at 1000 addresses (ready ones first). */
export function packSubsets(groups: Map<string, { ports: Obj[]; ready: Obj[]; notReady: Obj[] }>): { subsets: Obj[]; truncated: boolean } {
  // Addresses that share every port go together in one subset, as upstream's repacking does.
  const byAddresses = new Map<string, { ports: Obj[]; ready: Obj[]; notReady: Obj[] }>();
  for (const g of groups.values()) {
    const k = JSON.stringify([g.ready.map(addressKey).sort(), g.notReady.map(addressKey).sort()]);
    const same = byAddresses.get(k);
    if (same) same.ports.push(...g.ports);
    else byAddresses.set(k, { ports: [...g.ports], ready: g.ready, notReady: g.notReady });
  }
  let budget = maxEndpointsAddresses;
  let truncated = false;
  const subsets = [...byAddresses.values()].map((g) => {
    const subset: Obj = {};
    const ready = [...g.ready].sort(byAddress);
    const notReady = [...g.notReady].sort(byAddress);
    const keptReady = ready.slice(0, budget); budget -= keptReady.length;
    const keptNotReady = notReady.slice(0, budget); budget -= keptNotReady.length;
    if (keptReady.length < ready.length || keptNotReady.length < notReady.length) truncated = true;
    if (keptReady.length) subset.addresses = keptReady;
    if (keptNotReady.length) subset.notReadyAddresses = keptNotReady;
    if (g.ports.length) subset.ports = [...g.ports].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port);
    return subset;
  }).filter((subset) => subset.addresses || subset.notReadyAddresses);
  subsets.sort((a, b) => JSON.stringify(a.ports ?? []).localeCompare(JSON.stringify(b.ports ?? [])));
  return { subsets, truncated };
}

const addressKey = (a: Obj): string => `${a.ip}/${a.targetRef?.uid ?? ''}`;
const byAddress = (a: Obj, b: Obj): number => addressKey(a).localeCompare(addressKey(b));
