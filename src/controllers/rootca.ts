// The root CA publisher: every active namespace holds the ConfigMap
// `<product>-root-ca.crt` whose `ca.crt` is the bundle that verifies this
// server, put back when it is changed or deleted.

import { product, productKey, vocabulary } from '../machinery/vocabulary.js';
import { deepEqual } from '../machinery/equal.js';
import { ApiCallError, type ApiClient, type ApiObject, type ResourceType } from '../client/types.js';
import { Informer, type InformerFactory, type InformerSubscription } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import type { Controller } from './controller.js';

export const rootCaKey = 'ca.crt';
export const descriptionAnnotation = productKey('description');
export const rootCaDescription = `Contains a CA bundle that can be used to verify the ${product.name}-apiserver when using internal endpoints such as the internal service IP or ${product.name}.default.svc. No other usage is guaranteed across distributions of ${product.name} clusters.`;

export class RootCaPublisher implements Controller {
  readonly name = 'root-ca-cert-publisher';
  private readonly queue: WorkQueue;
  private readonly namespacesType: ResourceType;
  private readonly configMapsType: ResourceType;
  private namespaces?: InformerSubscription;
  /** Only the published ConfigMaps (a field selector), not every ConfigMap. */
  private readonly published: Informer;

  constructor(
    private readonly client: ApiClient,
    private readonly log: (msg: string, extra?: object) => void,
    private readonly informers: InformerFactory,
    private readonly rootCaPem: string,
  ) {
    const find = (resource: string) => client.resources().find((r) => r.group === '' && r.resource === resource)!;
    this.namespacesType = find('namespaces');
    this.configMapsType = find('configmaps');
    this.queue = new WorkQueue((ns) => this.sync(ns), (ns, err) => this.log('root CA publishing failed', { namespace: ns, err: String(err) }));
    const onConfigMap = (cm: ApiObject) => this.queue.add(cm.metadata!.namespace);
    this.published = new Informer(client, this.configMapsType, { onAdd: onConfigMap, onUpdate: (_o, cm) => onConfigMap(cm), onDelete: onConfigMap },
      undefined, { fieldSelector: `metadata.name=${vocabulary.rootCaConfigMap}` });
  }

  async start(): Promise<void> {
    const onNamespace = (ns: ApiObject) => { if (ns.status?.phase === 'Active') this.queue.add(ns.metadata!.name); };
    this.namespaces = this.informers.subscribe(this.namespacesType, { onAdd: onNamespace, onUpdate: (_o, ns) => onNamespace(ns) });
    await this.published.start();
    await this.namespaces.start();
  }

  stop(): void {
    this.namespaces?.stop();
    this.published.stop();
    this.queue.stop();
  }

  private async sync(namespace: string): Promise<void> {
    const ns = this.namespaces?.get(undefined, namespace);
    if (!ns || ns.status?.phase !== 'Active' || ns.metadata?.deletionTimestamp) return;
    const data = { [rootCaKey]: this.rootCaPem };
    const cm = this.published.get(namespace, vocabulary.rootCaConfigMap);
    try {
      if (!cm) {
        await this.client.create(this.configMapsType, namespace, {
          apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: vocabulary.rootCaConfigMap, annotations: { [descriptionAnnotation]: rootCaDescription } }, data,
        });
        return;
      }
      if (deepEqual(cm.data ?? {}, data) && cm.metadata?.annotations?.[descriptionAnnotation]) return;
      const annotations = { ...cm.metadata?.annotations, [descriptionAnnotation]: rootCaDescription };
      await this.client.update(this.configMapsType, namespace, { ...cm, metadata: { ...cm.metadata, annotations }, data });
    } catch (e) {
      // The namespace went or is going: nothing to publish there. Created or changed
      // meanwhile: the informer's event brings the namespace back to the queue.
      if (e instanceof ApiCallError && (e.code === 403 || e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
