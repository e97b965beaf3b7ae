// What the three certificate-request controllers (signing, auto-approving,
// cleaning) share: one informer of requests, a work queue of request names fed
// by the requests each wants, and the reading of a request's conditions.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources, resourceType } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

type Condition = { type?: string; status?: string };

export const conditionsOf = (csr: ApiObject): Condition[] => (Array.isArray(csr.status?.conditions) ? csr.status.conditions : []);
export const hasTrueCondition = (csr: ApiObject, type: string) => conditionsOf(csr).some((c) => c.type === type && c.status === 'True');
export const isApproved = (csr: ApiObject) => hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Denied');

export function csrResourceType(client: ApiClient): ResourceType {
  return resourceType(client, resources.certificateSigningRequests);
}

export abstract class CsrController extends BaseController {
  protected readonly queue: WorkQueue;
  protected readonly type: ResourceType;
  protected readonly requests: InformerSubscription;

  constructor(
    client: ApiClient,
    log: Log,
    kit: KitArgument,
    /** What the log says when a sync fails ("signing a certificate request failed"). */
    failure: string,
    /** The queue's name, as upstream's (`certificate`, `csrapproving`, ...). */
    queueName: string,
    /** Every request is offered again this often (the cleaner's hourly look). */
    resyncMs?: number,
  ) {
    super(client, log, kit);
    this.type = csrResourceType(client);
    this.queue = this.workQueue((name) => this.sync(name), { name: queueName, failure });
    this.requests = this.watch(this.type, { onAdd: (csr) => this.offer(csr), onUpdate: (_old, csr) => this.offer(csr) }, { resyncMs });
  }

  /** Queues the request when this controller has something to do with it. */
  protected offer(csr: ApiObject): void {
    if (this.wants(csr)) this.queue.add(csr.metadata!.name);
  }

  protected abstract wants(csr: ApiObject): boolean;
  protected abstract sync(name: string): Promise<void>;
}
