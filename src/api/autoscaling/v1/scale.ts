// autoscaling/v1 Scale: the view of a scalable object (a replication
// controller's scale sub-resource). Never stored; served only as a view.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { ObjectMeta } from '../../meta/v1.js';

const autoscaling = (name: string) => `${definitionPrefix}.api.autoscaling.v1.${name}`;

export const scales = defineKind({
  group: 'autoscaling', version: 'v1', kind: 'Scale', plural: 'scales', scope: 'Namespaced',
  protobuf: true,
  schema: define(autoscaling('Scale'), t.object({
    apiVersion: t.string('Schema version of this representation.'),
    kind: t.string('REST resource this object represents.'),
    metadata: p(1, t.ref(ObjectMeta, 'Standard object metadata.'), 'always'),
    spec: p(2, t.ref(define(autoscaling('ScaleSpec'), t.object({
      replicas: p(1, t.int32('Desired number of instances.'), 'always'),
    }, 'Desired scale.')), 'Desired scale.'), 'always'),
    status: p(3, t.ref(define(autoscaling('ScaleStatus'), t.object({
      replicas: p(1, t.int32('Actual number of instances.'), 'always'),
      selector: p(2, t.string('Label query over the pods counted, as a selector string.')),
    }, 'Current scale.', { required: ['replicas'] })), 'Current scale; read-only.'), 'always'),
  }, 'The scale of a scalable resource.')),
});

/** The Scale of an object whose spec.replicas and status.replicas it shows, `selector` the pods' selector string. */
export function scaleOf(obj: KubeObject, selector: string): KubeObject {
  const meta = obj.metadata ?? {};
  return {
    apiVersion: 'autoscaling/v1', kind: 'Scale',
    metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion, creationTimestamp: meta.creationTimestamp },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: { replicas: obj.status?.replicas ?? 0, selector },
  };
}
