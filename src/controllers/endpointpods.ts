// What the endpoints and endpoint-slice controllers share, as upstream's
// endpoint utilities: which Services a pod belongs to, whether a pod is an
// endpoint at all, whether it is ready, its address of a family, its
// hostname, and the port a Service port leads to on it.

import { isIPv4, isIPv6 } from 'node:net';
import type { ApiClient, ApiObject } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';
import { ownValue } from '../machinery/ownkeys.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { platServiceName } from './platservice.js';

type Obj = Record<string, any>;

/** `namespace/name` of an object: the key of the controllers' queues. */
export const objectKey = (o: ApiObject): string => `${o.metadata!.namespace}/${o.metadata!.name}`;

/** Whether a Service's selector (a plain map) selects these labels; a Service without one selects nothing here. */
export function serviceSelects(service: Obj, labels: Record<string, string> | undefined): boolean {
  const selector: Record<string, string> | undefined = service.spec?.selector;
  if (!selector) return false;
  const have = labels ?? {};
  return Object.keys(selector).every((k) => Object.hasOwn(have, k) && ownValue(have, k) === ownValue(selector, k));
}

/** Services the controllers leave alone: no selector (their endpoints are written by hand), ExternalName ones (a DNS name, no endpoints), the product's own. */
export function managedElsewhere(service: Obj): boolean {
  if (service.metadata?.namespace === vocabulary.defaultNamespace && service.metadata?.name === platServiceName) return true;
  return service.spec?.selector == null || service.spec?.type === 'ExternalName';
}

/** Upstream's ShouldPodBeInEndpoints: an address, not finished for good, and (unless `includeTerminating`) not being deleted. */
export function podIsEndpoint(pod: Obj, includeTerminating: boolean): boolean {
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).length) return false;
  if (!includeTerminating && pod.metadata?.deletionTimestamp) return false;
  const phase = pod.status?.phase;
  const restart = pod.spec?.restartPolicy ?? 'Always';
  if (restart === 'Never') return phase !== 'Failed' && phase !== 'Succeeded';
  if (restart === 'OnFailure') return phase !== 'Succeeded';
  return true;
}

export function podReady(pod: Obj): boolean {
  return ((pod.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The pod's addresses, first the primary one. */
function podAddresses(pod: Obj): string[] {
  const ips = ((pod.status?.podIPs ?? []) as Obj[]).map((p) => p.ip).filter((ip): ip is string => typeof ip === 'string');
  return ips.length ? ips : (pod.status?.podIP ? [pod.status.podIP] : []);
}

/** The pod's address of a family (IPv4 or IPv6), if it has one. */
export function podAddressOf(pod: Obj, family: 'IPv4' | 'IPv6'): string | undefined {
  return podAddresses(pod).find((ip) => (family === 'IPv4' ? isIPv4(ip) : isIPv6(ip)));
}

/** The families of a Service's endpoints: its ipFamilies, else its cluster IP's, else IPv4. */
export function serviceFamilies(service: Obj): ('IPv4' | 'IPv6')[] {
  const families = ((service.spec?.ipFamilies ?? []) as string[]).filter((f): f is 'IPv4' | 'IPv6' => f === 'IPv4' || f === 'IPv6');
  if (families.length) return families;
  const ip: string | undefined = service.spec?.clusterIP;
  return ip && isIPv6(ip) ? ['IPv6'] : ['IPv4'];
}

/** Upstream's ShouldSetHostname: a pod with a hostname whose subdomain is the Service. */
export function podHostname(pod: Obj, service: Obj): string | undefined {
  const hostname: string | undefined = pod.spec?.hostname;
  return hostname && pod.spec?.subdomain === service.metadata?.name && pod.metadata?.namespace === service.metadata?.namespace ? hostname : undefined;
}

export function isHeadless(service: Obj): boolean {
  return service.spec?.clusterIP === 'None';
}

/** The port a Service port leads to on a pod (a named targetPort looked up in its containers), or undefined when it has none. */
export function podPortFor(pod: Obj, servicePort: Obj): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  const asNumber = Number(target);
  if (target !== '' && Number.isInteger(asNumber)) return asNumber;
  const protocol = servicePort.protocol ?? 'TCP';
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])] as Obj[]) {
    for (const p of (c.ports ?? []) as Obj[]) if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

/** A reference to the pod, as both kinds of endpoints carry it. */
export function podReference(pod: Obj): Obj {
  return { kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid };
}

/** The Services of a pod's namespace that select it (with its old labels too, on a change). */
export function servicesOfPod(services: InformerSubscription, pod: ApiObject, old?: ApiObject): ApiObject[] {
  const namespace = pod.metadata?.namespace;
  return services.list().filter((svc) => svc.metadata?.namespace === namespace && !managedElsewhere(svc)
    && (serviceSelects(svc, pod.metadata?.labels) || (old !== undefined && serviceSelects(svc, old.metadata?.labels))));
}

/**
 * When the change that makes a sync happened: kept per Service key from the
 * events the controller saw, the latest one, and taken when the sync writes
 * (upstream's last-change-trigger-time, from pods' and Services' changes).
 */
export class TriggerTimes {
  private readonly times = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** A change of one of the key's pods or of its Service was seen now. */
  observe(key: string): void {
    this.times.set(key, this.now());
  }

  /** The time of the latest change seen for the key, as RFC 3339 with nanoseconds (Go's RFC3339Nano); forgets it. */
  take(key: string): string | undefined {
    const at = this.times.get(key);
    this.times.delete(key);
    return at === undefined ? undefined : new Date(at).toISOString().replace(/\.?0*Z$/, 'Z');
  }
}

/**
 * The wiring both controllers share: a queue of Service keys, fed by the
 * Services' own changes and by the changes of the pods they select (with the
 * time of each change kept for the trigger-time annotation). Subclasses add
 * the informer of what they write, started between the pods and the Services.
 */
export abstract class ServicePodsController extends BaseController {
  protected readonly queue: WorkQueue;
  protected readonly services: InformerSubscription;
  protected readonly pods: InformerSubscription;
  protected readonly triggers = new TriggerTimes(this.now);

  constructor(client: ApiClient, log: Log, kit: KitArgument, queueName: string, failure: string) {
    super(client, log, kit);
    this.queue = this.workQueue((key) => this.sync(key), { name: queueName, failure });
    const serviceChanged = (svc: ApiObject) => { this.triggers.observe(objectKey(svc)); this.queue.add(objectKey(svc)); };
    this.services = this.watch(this.resolve(resources.services), { onAdd: serviceChanged, onUpdate: (_o, svc) => serviceChanged(svc), onDelete: serviceChanged });
    const podChanged = (pod: ApiObject, old?: ApiObject) => {
      for (const svc of servicesOfPod(this.services, pod, old)) serviceChanged(svc);
    };
    this.pods = this.watch(this.resolve(resources.pods), { onAdd: (pod) => podChanged(pod), onUpdate: (old, pod) => podChanged(pod, old), onDelete: (pod) => podChanged(pod) });
  }

  /** The informer of the objects the controller writes. */
  protected abstract readonly written: InformerSubscription;

  protected abstract sync(key: string): Promise<void>;

  /** The pods of the Service's namespace it selects. */
  protected selectedPods(service: ApiObject): ApiObject[] {
    return this.pods.list().filter((pod) => pod.metadata?.namespace === service.metadata?.namespace && serviceSelects(service, pod.metadata?.labels));
  }

  override async start(): Promise<void> {
    // The Services last: their first syncs then see every pod and every object already written.
    await this.pods.start();
    await this.written.start();
    await this.services.start();
  }
}
