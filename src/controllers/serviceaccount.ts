// The service account controller: every active namespace holds a
// ServiceAccount named `default`, created when the namespace appears and
// again whenever it is deleted.

import { ApiClient, ApiCallError, ApiObject } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

export const defaultServiceAccountName = 'default';

export class ServiceAccountController extends BaseController {
  readonly name = 'serviceaccount';
  private readonly queue: WorkQueue;
  private readonly namespaces: InformerSubscription;
  private readonly accounts: InformerSubscription;

  constructor(client: ApiClient, log: Log = () => undefined, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((ns) => this.sync(ns), { name: 'serviceaccount', failure: 'service account sync failed' });
    const onNamespace = (ns: ApiObject) => this.queue.add(ns.metadata!.name);
    const onAccountGone = (sa: ApiObject) => { if (sa.metadata?.name === defaultServiceAccountName) this.queue.add(sa.metadata.namespace); };
    this.namespaces = this.watch(this.resolve(resources.namespaces), { onAdd: onNamespace, onUpdate: (_o, ns) => onNamespace(ns) });
    this.accounts = this.watch(this.resolve(resources.serviceAccounts), { onDelete: onAccountGone }, { metadataOnly: true });
  }

  private async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.get(undefined, namespace);
    if (!ns || ns.metadata?.deletionTimestamp || ns.status?.phase !== 'Active') return;
    // A cache that has not seen the account yet makes the create below answer 409, which is fine.
    if (this.accounts.get(namespace, defaultServiceAccountName)) return;
    try {
      await this.client.create(this.accounts.type, namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: defaultServiceAccountName } });
    } catch (e) {
      // Created meanwhile, or the namespace began terminating: nothing to do.
      if (e instanceof ApiCallError && (e.code === 409 || e.code === 403 || e.code === 404)) return;
      throw e;
    }
  }
}
