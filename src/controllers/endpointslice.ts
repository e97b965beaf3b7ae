// The endpoint-slice controller, as upstream's: the EndpointSlices of every
// Service with a selector, one set per address family of the Service, each
// slice at most 100 endpoints sharing one set of ports. Every pod with an
// address is an endpoint, terminating ones too, with its conditions: serving
// (ready, or the Service publishes not-ready addresses), terminating (being
// deleted) and ready (serving and not terminating, or published anyway).
// A Service with no endpoints keeps one empty placeholder slice. Slices are
// labelled with their Service and this controller and owned by the Service,
// so the garbage collector removes them with it. Slices of other managers
// are not touched.

import type { ApiClient, ApiObject } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import { deepEqual } from '../machinery/equal.js';
import { upstreamCompat, vocabulary } from '../machinery/vocabulary.js';
import type { KitArgument, Log } from './controller.js';
import {
  isHeadless, managedElsewhere, podAddressOf, podHostname, podIsEndpoint, podPortFor, podReady, podReference,
  serviceFamilies, ServicePodsController,
} from './endpointpods.js';

type Obj = Record<string, any>;

/** Upstream's --max-endpoints-per-slice default. */
export const maxEndpointsPerSlice = 100;

const serviceIndex = 'service';
const managedBy = (slice: ApiObject) => slice.metadata?.labels?.[vocabulary.endpointSliceManagedByLabel] === vocabulary.endpointSliceControllerName;

/** The slices one Service should have: per address type and port set, its endpoints in chunks. */
interface DesiredSlice {
  addressType: 'IPv4' | 'IPv6';
  ports: Obj[];
  endpoints: Obj[];
}

export class EndpointSliceController extends ServicePodsController {
  readonly name = 'endpointslice';
  protected readonly written: InformerSubscription;
  /**
   * What this controller last wrote per Service key: slice name -> the
   * resourceVersion written (null: deleted). A sync waits until the cache
   * shows them, so that a slice it just made is never made twice (upstream's
   * endpoint slice tracker).
   */
  private readonly lastWrites = new Map<string, Map<string, string | null>>();

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit, 'endpoint_slice', 'endpoint slice sync failed');
    // Our slices changed or removed by someone else are put right.
    const sliceChanged = (slice: ApiObject) => {
      const service = slice.metadata?.labels?.[vocabulary.serviceNameLabel];
      if (managedBy(slice) && service) this.queue.add(`${slice.metadata!.namespace}/${service}`);
    };
    this.written = this.watch(this.resolve(resources.endpointSlices), { onAdd: sliceChanged, onUpdate: (_o, slice) => sliceChanged(slice), onDelete: sliceChanged }, {
      indexers: { [serviceIndex]: (slice) => (managedBy(slice) && slice.metadata?.labels?.[vocabulary.serviceNameLabel] ? [`${slice.metadata!.namespace}/${slice.metadata!.labels[vocabulary.serviceNameLabel]}`] : []) },
    });
  }

  protected async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const service = this.services.get(namespace, name);
    // A deleted Service's slices go with it (the garbage collector follows their owner reference); one without a selector gets none.
    if (!service || managedElsewhere(service)) { this.triggers.take(key); this.lastWrites.delete(key); return; }
    if (!this.cacheHasWrites(key, namespace)) {
      // The slices' own events bring the key back; the timer is in case they were overtaken.
      this.queue.addAfter(key, 1000);
      return;
    }
    // Slices of an earlier Service of the same name belong to it still: the garbage collector removes them.
    const existing = this.written.byIndex(serviceIndex, key).filter((slice) => slice.metadata?.deletionTimestamp === undefined
      && ((slice.metadata?.ownerReferences ?? []) as Obj[]).some((o) => o.controller === true && o.uid === service.metadata?.uid));
    const desired = this.desiredSlices(service);
    const trigger = this.triggers.take(key);
    const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
    delete labels[vocabulary.serviceNameLabel];
    delete labels[upstreamCompat.serviceNameLabel];
    delete labels[vocabulary.endpointSliceManagedByLabel];
    // Upstream's name too: kubectl describe finds a Service's slices by it.
    labels[vocabulary.serviceNameLabel] = name;
    labels[upstreamCompat.serviceNameLabel] = name;
    labels[vocabulary.endpointSliceManagedByLabel] = vocabulary.endpointSliceControllerName;
    if (isHeadless(service)) labels[vocabulary.headlessServiceLabel] = '';
    const owner = { apiVersion: 'v1', kind: 'Service', name, uid: service.metadata!.uid, controller: true, blockOwnerDeletion: true };
    // Existing slices of the same address type and ports are reused in name order; the rest are made or removed.
    const unused = [...existing].sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    const writes: Promise<unknown>[] = [];
    for (const want of desired) {
      const at = unused.findIndex((s) => s.addressType === want.addressType && deepEqual(s.ports ?? [], want.ports));
      const reuse = at >= 0 ? unused.splice(at, 1)[0] : undefined;
      const content = { addressType: want.addressType, endpoints: want.endpoints, ports: want.ports };
      if (reuse) {
        const same = deepEqual(reuse.endpoints ?? [], want.endpoints) && deepEqual(reuse.metadata?.labels ?? {}, labels);
        if (same) continue;
        const annotations = { ...(reuse.metadata?.annotations ?? {}) };
        if (trigger) annotations[vocabulary.lastChangeTriggerTimeAnnotation] = trigger;
        writes.push(this.client.update(this.written.type, namespace, { ...reuse, metadata: { ...reuse.metadata, labels, annotations }, ...content } as ApiObject));
      } else {
        const metadata: Obj = { generateName: `${name}-`.slice(0, 63 - 5), namespace, labels, ownerReferences: [owner] };
        if (trigger) metadata.annotations = { [vocabulary.lastChangeTriggerTimeAnnotation]: trigger };
        writes.push(this.client.create(this.written.type, namespace, { apiVersion: `${this.written.type.group}/v1`, kind: 'EndpointSlice', metadata, ...content } as ApiObject));
      }
    }
    for (const extra of unused) writes.push(this.client.delete(this.written.type, namespace, extra.metadata!.name!).then(() => ({ metadata: { name: extra.metadata!.name } })));
    const results = await Promise.allSettled(writes);
    const seen = new Map<string, string | null>();
    for (const r of results) {
      if (r.status !== 'fulfilled') continue;
      const meta = (r.value as ApiObject).metadata!;
      seen.set(meta.name!, meta.resourceVersion ?? null);
    }
    if (seen.size) this.lastWrites.set(key, seen);
    for (const r of results) {
      // A conflict or a missing slice: changed meanwhile, its event brings the key back.
      if (r.status === 'rejected' && !isConflict(r.reason) && !isNotFound(r.reason)) throw r.reason;
    }
  }

  /** Whether the cache shows every write of the key's last sync. */
  private cacheHasWrites(key: string, namespace: string): boolean {
    const wrote = this.lastWrites.get(key);
    if (!wrote) return true;
    for (const [name, rv] of wrote) {
      const cached = this.written.get(namespace, name);
      if (rv === null ? cached !== undefined : !cached || !atLeast(cached.metadata?.resourceVersion, rv)) return false;
    }
    this.lastWrites.delete(key);
    return true;
  }

  private desiredSlices(service: ApiObject): DesiredSlice[] {
    const publishNotReady = service.spec?.publishNotReadyAddresses === true;
    const servicePorts: Obj[] = service.spec?.ports ?? [];
    const out: DesiredSlice[] = [];
    const pods = this.selectedPods(service).filter((pod) => podIsEndpoint(pod, true));
    for (const family of serviceFamilies(service)) {
      // Port set (as JSON) -> endpoints with exactly those ports.
      const groups = new Map<string, { ports: Obj[]; endpoints: Obj[] }>();
      for (const pod of pods) {
        const ip = podAddressOf(pod, family);
        if (!ip) continue;
        const ports: Obj[] = [];
        for (const sp of servicePorts) {
          const port = podPortFor(pod, sp);
          if (port === undefined) continue;
          const ep: Obj = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
          if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
          ports.push(ep);
        }
        const serving = publishNotReady || podReady(pod);
        const terminating = pod.metadata?.deletionTimestamp !== undefined;
        const endpoint: Obj = { addresses: [ip], conditions: { ready: publishNotReady || (serving && !terminating), serving, terminating } };
        const hostname = podHostname(pod, service);
        if (hostname) endpoint.hostname = hostname;
        endpoint.targetRef = podReference(pod);
        if (pod.spec?.nodeName) endpoint.nodeName = pod.spec.nodeName;
        const k = JSON.stringify(ports);
        let g = groups.get(k);
        if (!g) groups.set(k, g = { ports, endpoints: [] });
        g.endpoints.push(endpoint);
      }
      for (const g of groups.values()) {
        g.endpoints.sort((a, b) => a.addresses[0].localeCompare(b.addresses[0]) || String(a.targetRef.uid).localeCompare(String(b.targetRef.uid)));
        for (let i = 0; i < g.endpoints.length; i += maxEndpointsPerSlice) {
          out.push({ addressType: family, ports: g.ports, endpoints: g.endpoints.slice(i, i + maxEndpointsPerSlice) });
        }
      }
    }
    // No endpoints at all: one placeholder slice says the Service is handled.
    if (out.length === 0) out.push({ addressType: serviceFamilies(service)[0]!, ports: [], endpoints: [] });
    return out;
  }
}

/** Whether resourceVersion `a` is `b` or later (both are decimal counters here). */
function atLeast(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  try { return BigInt(a) >= BigInt(b); } catch { return a === b; }
}
