// storage/v1 StorageClass: a kind of dynamically provisioned volume, named
// by claims. Its provisioner, parameters, reclaim policy and binding mode
// never change once made, as upstream.

import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { checkName, fieldPath, isQualifiedName } from '../../../machinery/validation.js';
import { core, kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { definitionsOf, immutable } from '../../sharedrules.js';

type Obj = Record<string, any>;
const storage = definitionsOf('storage');
const s = t.string;

/** A core v1 type only storage classes use: topology values a volume can be reached from. */
const TopologySelectorTerm = define(core('TopologySelectorTerm'), t.object({
  matchLabelExpressions: p(1, t.array(t.ref(define(core('TopologySelectorLabelRequirement'), t.object({
    key: p(1, s('The topology label key.')),
    values: p(2, t.array(s(), 'Values the label may have; at least one.', { listType: 'atomic' })),
  }, 'A topology label and the values it may have.', { required: ['key', 'values'] }))), 'Requirements on topology labels.', { listType: 'atomic' })),
}, 'A topology domain: requirements that all hold.', { mapType: 'atomic' }));

const reclaimPolicies = ['Delete', 'Retain'];
const bindingModes = ['Immediate', 'WaitForFirstConsumer'];
const maxParameters = 512;
const maxParametersSize = 256 * 1024;

const schema = kindSchema('A kind of dynamically provisioned volume, named by claims.', {
  provisioner: p(2, s('The volume plugin that provisions volumes of the class; immutable.')),
  parameters: p(3, t.map(s(), 'Parameters for the provisioner; immutable.')),
  reclaimPolicy: p(4, s('Delete (when unset) or Retain: what happens to volumes of the class when released; immutable.', { enum: reclaimPolicies }), 'whenSet'),
  mountOptions: p(5, t.array(s(), 'Mount options of volumes of the class.', { listType: 'atomic' })),
  allowVolumeExpansion: p(6, t.bool('Whether volumes of the class may grow.')),
  volumeBindingMode: p(7, s('Immediate (when unset) or WaitForFirstConsumer; immutable.', { enum: bindingModes }), 'whenSet'),
  allowedTopologies: p(8, t.array(t.ref(TopologySelectorTerm), 'Where volumes of the class may be provisioned.', { listType: 'atomic' })),
}, ['provisioner']);

function validateTopologies(terms: Obj[]): FieldError[] {
  const errs: FieldError[] = [];
  terms.forEach((term, i) => {
    const at = fieldPath('allowedTopologies', i);
    ((term.matchLabelExpressions ?? []) as Obj[]).forEach((req, j) => {
      const rat = fieldPath(`${at}.matchLabelExpressions`, j);
      errs.push(...checkName(isQualifiedName, `${rat}.key`, req.key ?? ''));
      const values: string[] = req.values ?? [];
      if (values.length === 0) errs.push(fieldErrors.required(`${rat}.values`, 'must specify as least one value'));
      const seen = new Set<string>();
      values.forEach((v, k) => {
        if (seen.has(v)) errs.push(fieldErrors.duplicate(fieldPath(`${rat}.values`, k), v));
        seen.add(v);
      });
    });
    if (terms.slice(0, i).some((other) => deepEqual(other, term))) errs.push(fieldErrors.duplicate(at, term));
  });
  return errs;
}

function validateStorageClass(sc: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner: string = sc.provisioner ?? '';
  if (!provisioner) errs.push(fieldErrors.required('provisioner', ''));
  else for (const m of isQualifiedName(provisioner.toLowerCase())) errs.push(fieldErrors.invalid('provisioner', provisioner, m));
  const params = Object.entries((sc.parameters ?? {}) as Record<string, string>);
  if (params.length > maxParameters) errs.push(new FieldError('FieldValueTooLong', 'parameters', `may not be more than ${maxParameters} bytes`, 'Provisioner Parameters exceeded max allowed'));
  let size = 0;
  for (const [k, v] of params) {
    if (k.length < 1) errs.push(fieldErrors.invalid('parameters', k, 'field can not be empty.'));
    size += k.length + v.length;
  }
  if (size > maxParametersSize) errs.push(fieldErrors.tooLong('parameters', maxParametersSize));
  if (sc.reclaimPolicy && !reclaimPolicies.includes(sc.reclaimPolicy)) errs.push(fieldErrors.notSupported('reclaimPolicy', sc.reclaimPolicy, reclaimPolicies));
  if (sc.volumeBindingMode == null) errs.push(fieldErrors.required('volumeBindingMode', ''));
  else if (!bindingModes.includes(sc.volumeBindingMode)) errs.push(fieldErrors.notSupported('volumeBindingMode', sc.volumeBindingMode, bindingModes));
  errs.push(...validateTopologies(sc.allowedTopologies ?? []));
  return errs;
}

function validateStorageClassUpdate(sc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStorageClass(sc);
  if (!deepEqual(sc.parameters ?? {}, old.parameters ?? {})) errs.push(fieldErrors.forbidden('parameters', 'updates to parameters are forbidden.'));
  if (sc.provisioner !== old.provisioner) errs.push(fieldErrors.forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (sc.reclaimPolicy !== old.reclaimPolicy) errs.push(fieldErrors.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  errs.push(...immutable(sc.volumeBindingMode, old.volumeBindingMode, 'volumeBindingMode'));
  return errs;
}

/** Upstream marks the default class in the name column. */
function isDefaultClass(sc: KubeObject): boolean {
  const annotations: Record<string, string> = sc.metadata?.annotations ?? {};
  return Object.hasOwn(annotations, vocabulary.defaultStorageClassAnnotation) && annotations[vocabulary.defaultStorageClassAnnotation] === 'true';
}

export const storageClasses = defineKind({
  group: vocabulary.storageGroup, version: 'v1', kind: 'StorageClass', plural: 'storageclasses', shortNames: ['sc'],
  protobuf: true,
  scope: 'Cluster',
  schema: define(storage('StorageClass'), schema),
  strategy: {
    defaults(sc) {
      sc.reclaimPolicy ??= 'Delete';
      sc.volumeBindingMode ??= 'Immediate';
    },
    validate: validateStorageClass,
    validateUpdate: validateStorageClassUpdate,
  },
  printerColumns: [
    { ...nameColumn, value: (sc) => (isDefaultClass(sc) ? `${sc.metadata?.name} (default)` : sc.metadata?.name) },
    { name: 'Provisioner', type: 'string', description: 'The volume plugin of the class.', value: (sc) => sc.provisioner ?? '' },
    { name: 'ReclaimPolicy', type: 'string', description: 'What happens to released volumes.', value: (sc) => sc.reclaimPolicy ?? 'Delete' },
    { name: 'VolumeBindingMode', type: 'string', description: 'When volumes are bound.', value: (sc) => sc.volumeBindingMode ?? 'Immediate' },
    { name: 'AllowVolumeExpansion', type: 'string', description: 'Whether volumes may grow.', value: (sc) => String(sc.allowVolumeExpansion === true) },
    ageColumn,
  ],
});
