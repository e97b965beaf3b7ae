// DefaultStorageClass and DefaultIngressClass: a new claim or ingress that
// names no class gets the class annotated as the default; with none marked
// nothing changes, and with more than one marked the create is refused (the
// specification's rule; upstream since 1.26 picks the newest instead). Only
// creates are touched. Classes come from the informer's cache.

import type { KubeObject } from '../../api/kind.js';
import { errors } from '../../machinery/errors.js';
import { product, productKey, vocabulary } from '../../machinery/vocabulary.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';

type Obj = Record<string, any>;

/** The claim annotation that named a class before `storageClassName` (upstream volume.beta.kubernetes.io/storage-class). */
export const betaStorageClassAnnotation = `volume.beta.${product.domain}/storage-class`;
/** The ingress annotation that named a class before `ingressClassName` (upstream kubernetes.io/ingress.class). */
export const ingressClassAnnotation = productKey('ingress.class');

function defaults(classes: Lister, annotation: string): KubeObject[] {
  return classes.list().filter((c) => (c.metadata?.annotations as Obj | undefined)?.[annotation] === 'true');
}

function annotated(object: KubeObject, key: string): boolean {
  const annotations = object.metadata?.annotations as Obj | undefined;
  return !!annotations && Object.prototype.hasOwnProperty.call(annotations, key);
}

export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';

  constructor(private readonly classes: Lister) {}

  mutate(r: AdmissionRequest): void {
    if (r.operation !== 'CREATE' || r.subresource || r.kind.group !== '' || r.kind.kind !== 'PersistentVolumeClaim' || !r.object) return;
    const spec = (r.object.spec ??= {}) as Obj;
    // A claim that names a class, even the empty one (no class at all), keeps it.
    if (spec.storageClassName != null || annotated(r.object, betaStorageClassAnnotation)) return;
    const found = defaults(this.classes, vocabulary.defaultStorageClassAnnotation);
    if (found.length > 1) throw forbiddenRequest(r, errors.internal(`${found.length} default StorageClasses were found`).message);
    if (found.length === 1) spec.storageClassName = found[0]!.metadata?.name;
  }
}

export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = 'DefaultIngressClass';

  constructor(private readonly classes: Lister) {}

  mutate(r: AdmissionRequest): void {
    if (r.operation !== 'CREATE' || r.subresource || r.kind.group !== vocabulary.networkingGroup || r.kind.kind !== 'Ingress' || !r.object) return;
    const spec = (r.object.spec ??= {}) as Obj;
    if (spec.ingressClassName != null || annotated(r.object, ingressClassAnnotation)) return;
    const found = defaults(this.classes, vocabulary.defaultIngressClassAnnotation);
    if (found.length > 1) {
      throw errors.forbidden({ group: vocabulary.networkingGroup, resource: 'ingressclasses' }, undefined, `${found.length} default IngressClasses were found, only 1 allowed`);
    }
    if (found.length === 1) spec.ingressClassName = found[0]!.metadata?.name;
  }
}
