// The root CA publisher: every active namespace holds the ConfigMap
// `<product>-root-ca.crt` whose `ca.crt` is the bundle that verifies this
// server, put back when it is changed or deleted.

import { product, productKey, vocabulary } from '../machinery/vocabulary.js';
import { deepEqual } from '../machinery/equal.js';
import { ApiCallError, type ApiClient, type ApiObject } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

export const rootCaKey = 'ca.crt';
export const descriptionAnnotation = productKey('description');
export const rootCaDescription = `Contains a CA bundle that can be used to verify the ${product.name}-apiserver when using internal endpoints such as the internal service IP or ${product.name}.default.svc. No other usage is guaranteed across distributions of ${product.name} clusters.`;

export class RootCaPublisher extends BaseController {
  readonly name = 'root-ca-cert-publisher';
  private readonly queue: WorkQueue;
  private readonly namespaces: InformerSubscription;
  /** Only the published ConfigMaps (a field selector), not every ConfigMap. */
  private readonly published: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument, private readonly rootCaPem: string) {
    super(client, log, kit);
    this.queue = this.workQueue((ns) => this.sync(ns), { name: 'root_ca_cert_publisher', failure: 'root CA publishing failed' });
    const onConfigMap = (cm: ApiObject) => this.queue.add(cm.metadata!.namespace);
    this.published = this.watch(this.resolve(resources.configMaps), { onAdd: onConfigMap, onUpdate: (_o, cm) => onConfigMap(cm), onDelete: onConfigMap },
      { fieldSelector: `metadata.name=${vocabulary.rootCaConfigMap}` });
    const onNamespace = (ns: ApiObject) => { if (ns.status?.phase === 'Active') this.queue.add(ns.metadata!.name); };
    this.namespaces = this.watch(this.resolve(resources.namespaces), { onAdd: onNamespace, onUpdate: (_o, ns) => onNamespace(ns) });
  }

  // What is published is known before the namespaces come: no create for a ConfigMap that exists.
  override async start(): Promise<void> {
    await this.published.start();
    await this.namespaces.start();
  }

  private async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.get(undefined, namespace);
    if (!ns || ns.status?.phase !== 'Active' || ns.metadata?.deletionTimestamp) return;
    const data = { [rootCaKey]: this.rootCaPem };
    const cm = this.published.get(namespace, vocabulary.rootCaConfigMap);
    try {
      if (!cm) {
        await this.client.create(this.published.type, namespace, {
          apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: vocabulary.rootCaConfigMap, annotations: { [descriptionAnnotation]: rootCaDescription } }, data,
        });
        return;
      }
      if (deepEqual(cm.data ?? {}, data) && cm.metadata?.annotations?.[descriptionAnnotation]) return;
      const annotations = { ...cm.metadata?.annotations, [descriptionAnnotation]: rootCaDescription };
      await this.client.update(this.published.type, namespace, { ...cm, metadata: { ...cm.metadata, annotations }, data });
    } catch (e) {
      // The namespace went or is going: nothing to publish there. Created or changed
      // meanwhile: the informer's event brings the namespace back to the queue.
      if (e instanceof ApiCallError && (e.code === 403 || e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
