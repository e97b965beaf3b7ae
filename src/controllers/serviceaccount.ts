// The service account controller: every active namespace holds a
// ServiceAccount named `default`, created when the namespace appears and
// again whenever it is deleted.

import { ApiClient, ApiCallError, ApiObject, ResourceType } from '../client/types.js';
import { InformerFactory, InformerSubscription } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import type { Controller } from './controller.js';

export const defaultServiceAccountName = 'default';

export class ServiceAccountController implements Controller {
  readonly name = 'serviceaccount';
  private readonly queue: WorkQueue;
  private readonly subscriptions: InformerSubscription[] = [];
  private readonly namespaces: ResourceType;
  private readonly serviceAccounts: ResourceType;

  constructor(
    private readonly client: ApiClient,
    private readonly log: (msg: string, extra?: object) => void = () => undefined,
    /** Shared with the other controllers; whoever made it stops it. */
    private readonly informers: InformerFactory,
  ) {
    const find = (resource: string) => client.resources().find((r) => r.group === '' && r.resource === resource)!;
    this.namespaces = find('namespaces');
    this.serviceAccounts = find('serviceaccounts');
    this.queue = new WorkQueue((ns) => this.sync(ns), (ns, e) => this.log('service account sync failed', { namespace: ns, err: String(e) }));
  }

  async start(): Promise<void> {
    const onNamespace = (ns: ApiObject) => this.queue.add(ns.metadata!.name);
    const onAccountGone = (sa: ApiObject) => { if (sa.metadata?.name === defaultServiceAccountName) this.queue.add(sa.metadata.namespace); };
    this.subscriptions.push(
      this.informers.subscribe(this.namespaces, { onAdd: onNamespace, onUpdate: (_o, ns) => onNamespace(ns) }),
      this.informers.subscribe(this.serviceAccounts, { onDelete: onAccountGone }, { metadataOnly: true }),
    );
    await Promise.all(this.subscriptions.map((i) => i.start()));
  }

  stop(): void {
    for (const i of this.subscriptions) i.stop();
    this.queue.stop();
  }

  private async sync(namespace: string): Promise<void> {
    const ns = await this.client.get(this.namespaces, undefined, namespace);
    if (!ns || ns.metadata?.deletionTimestamp || ns.status?.phase !== 'Active') return;
    if (await this.client.get(this.serviceAccounts, namespace, defaultServiceAccountName)) return;
    try {
      await this.client.create(this.serviceAccounts, namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: defaultServiceAccountName } });
    } catch (e) {
      // Created meanwhile, or the namespace began terminating: nothing to do.
      if (e instanceof ApiCallError && (e.code === 409 || e.code === 403 || e.code === 404)) return;
      throw e;
    }
  }
}
