// What the three certificate-request controllers (signing, auto-approving,
// cleaning) share: one informer of requests, a work queue of request names fed
// by the requests each wants, and the reading of a request's conditions.

import { vocabulary } from '../machinery/vocabulary.js';
import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import type { InformerFactory, InformerSubscription } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import type { Controller } from './controller.js';

type Condition = { type?: string; status?: string };

export const conditionsOf = (csr: ApiObject): Condition[] => (Array.isArray(csr.status?.conditions) ? csr.status.conditions : []);
export const hasTrueCondition = (csr: ApiObject, type: string) => conditionsOf(csr).some((c) => c.type === type && c.status === 'True');
export const isApproved = (csr: ApiObject) => hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Denied');

export function csrResourceType(client: ApiClient): ResourceType {
  return client.resources().find((r) => r.group === vocabulary.certificatesGroup && r.resource === 'certificatesigningrequests')!;
}

export abstract class CsrController implements Controller {
  abstract readonly name: string;
  protected readonly queue: WorkQueue;
  protected readonly type: ResourceType;
  protected requests?: InformerSubscription;

  constructor(
    protected readonly client: ApiClient,
    protected readonly log: (msg: string, extra?: object) => void,
    private readonly informers: InformerFactory,
    /** What the log says when a sync fails ("signing a certificate request failed"). */
    failure: string,
  ) {
    this.type = csrResourceType(client);
    this.queue = new WorkQueue((name) => this.sync(name), (name, err) => this.log(failure, { name, err: String(err) }));
  }

  async start(): Promise<void> {
    this.requests = this.informers.subscribe(this.type, { onAdd: (csr) => this.offer(csr), onUpdate: (_old, csr) => this.offer(csr) });
    await this.requests.start();
  }

  stop(): void {
    this.requests?.stop();
    this.queue.stop();
  }

  /** Queues the request when this controller has something to do with it. */
  protected offer(csr: ApiObject): void {
    if (this.wants(csr)) this.queue.add(csr.metadata!.name);
  }

  protected abstract wants(csr: ApiObject): boolean;
  protected abstract sync(name: string): Promise<void>;
}
