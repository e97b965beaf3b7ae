// node/v1 RuntimeClass: a container runtime configuration pods may ask for
// by name, with the pod overhead it adds and the nodes that offer it.

import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError } from '../../../machinery/errors.js';
import { checkName, isDns1123Label } from '../../../machinery/validation.js';
import { validateLabels } from '../../../machinery/objectmeta.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { resourceList } from '../../core/v1/containers.js';
import { Toleration } from '../../core/v1/podspec.js';
import { validateResourceList } from '../../core/v1/podvalidation.js';
import { definitionsOf, immutable } from '../../sharedrules.js';

const node = definitionsOf('node');

const schema = kindSchema('A container runtime configuration pods may ask for by name.', {
  handler: p(2, t.string('The runtime configuration the node agent hands pods of the class to (a DNS label); immutable.')),
  overhead: p(3, t.ref(define(node('Overhead'), t.object({
    podFixed: p(1, resourceList('Resources a pod of the class uses beyond its containers.')),
  }, 'The overhead of running a pod of a class.')), 'Resources a pod of the class uses beyond its containers.')),
  scheduling: p(4, t.ref(define(node('Scheduling'), t.object({
    nodeSelector: p(1, { ...t.map(t.string(), 'Labels a node must have to run pods of the class.'), mapType: 'atomic' }),
    tolerations: p(2, t.array(t.ref(Toleration), 'Tolerations added to pods of the class.', { listType: 'atomic' })),
  }, 'Where pods of a class can run.')), 'Where pods of the class can run.')),
}, ['handler']);

function validateRuntimeClass(rc: KubeObject): FieldError[] {
  const errs = checkName(isDns1123Label, 'handler', rc.handler ?? '');
  if (rc.overhead?.podFixed) errs.push(...validateResourceList(rc.overhead.podFixed, 'overhead.podFixed').errs);
  if (rc.scheduling?.nodeSelector) errs.push(...validateLabels(rc.scheduling.nodeSelector, 'scheduling.nodeSelector'));
  return errs;
}

export const runtimeClasses = defineKind({
  group: vocabulary.nodeGroup, version: 'v1', kind: 'RuntimeClass', plural: 'runtimeclasses',
  protobuf: true,
  scope: 'Cluster',
  schema: define(node('RuntimeClass'), schema),
  strategy: {
    validate: validateRuntimeClass,
    validateUpdate: (rc, old) => [...validateRuntimeClass(rc), ...immutable(rc.handler, old.handler, 'handler')],
  },
  printerColumns: [
    nameColumn,
    { name: 'Handler', type: 'string', description: 'The runtime configuration of the class.', value: (rc) => rc.handler ?? '' },
    ageColumn,
  ],
});

export const nodeV1Kinds = [runtimeClasses];
