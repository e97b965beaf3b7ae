// PersistentVolume (cluster-scoped) and PersistentVolumeClaim (core v1):
// upstream 1.32's fields (the common volume sources; see volumes.ts),
// defaults, validation and columns; both with a status part.

import { define, p, t } from '../../schema.js';
import { validatePersistentVolumeClaimStatusUpdate } from './statusvalidation.js';
import { defineKind, type KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { validateLabelSelector } from '../../../machinery/selectors.js';
import { Time } from '../../meta/v1.js';
import { core, kindSchema, nameColumn, ageColumn, ObjectReference } from './common.js';
import { mergedBy, resourceList } from './containers.js';
import { NodeSelector } from './podspec.js';
import { PersistentVolumeClaimSpec } from './volumes.js';
import { PersistentVolumeSource, persistentSources, validatePersistentSource } from './persistentsources.js';
import { validateResourceList } from './podvalidation.js';
import { optionalEnum } from '../../sharedrules.js';

const s = t.string;
type Obj = Record<string, any>;

export const PersistentVolumeSpec = define(core('PersistentVolumeSpec'), t.object({
  capacity: p(1, resourceList('Capacity of the volume (storage).')),
  ...persistentSources,
  accessModes: p(3, t.array(s(), 'How the volume can be mounted.', { listType: 'atomic' })),
  claimRef: p(4, t.ref(ObjectReference, 'The claim bound to the volume.')),
  persistentVolumeReclaimPolicy: p(5, s('Retain, Recycle or Delete; Retain when unset.', { enum: ['Delete', 'Recycle', 'Retain'] })),
  storageClassName: p(6, s('StorageClass of the volume.')),
  mountOptions: p(7, t.array(s(), 'Mount options.', { listType: 'atomic' })),
  volumeMode: p(8, s('Filesystem or Block; Filesystem when unset.', { enum: ['Block', 'Filesystem'] })),
  nodeAffinity: p(9, t.ref(define(core('VolumeNodeAffinity'), t.object({
    required: p(1, t.ref(NodeSelector, 'Nodes the volume can be reached from.')),
  }, 'Nodes a volume can be reached from.')), 'Nodes the volume can be reached from.')),
  volumeAttributesClassName: p(10, s('VolumeAttributesClass of the volume.')),
}, 'A persistent volume\'s specification.', { protoInline: [{ proto: 2, schema: PersistentVolumeSource }] }));

// Upstream lists a set's values sorted (sets.List).
const accessModes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const reclaimPolicies = ['Delete', 'Recycle', 'Retain'];
const volumeModes = ['Block', 'Filesystem'];
const accessModeShort: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const modesText = (modes: string[] | undefined) => (modes ?? []).map((m) => accessModeShort[m] ?? m).join(',');

/** Access modes of a volume (`required` is the claim's wording; a volume's Required has none). */
function validateAccessModes(modes: unknown, field: string, required: string): FieldError[] {
  const list: string[] = Array.isArray(modes) ? modes : [];
  const errs: FieldError[] = [];
  if (!list.length) errs.push(fieldErrors.required(field, required));
  for (const m of list) if (!accessModes.includes(m)) errs.push(fieldErrors.notSupported(field, m, accessModes));
  // Only supported modes count as the others ReadWriteOncePod may not be used with.
  if (list.includes('ReadWriteOncePod') && list.some((m) => m !== 'ReadWriteOncePod' && accessModes.includes(m))) {
    errs.push(fieldErrors.forbidden(field, 'may not use ReadWriteOncePod with other access modes'));
  }
  return errs;
}

function validatePV(pv: KubeObject): FieldError[] {
  const spec: Obj = pv.spec ?? {};
  const errs = validateAccessModes(spec.accessModes, 'spec.accessModes', '');
  // An empty reclaim policy is none (defaulted to Retain), as upstream's len() > 0.
  if (spec.persistentVolumeReclaimPolicy !== '') errs.push(...optionalEnum(spec.persistentVolumeReclaimPolicy, 'spec.persistentVolumeReclaimPolicy', reclaimPolicies));
  errs.push(...optionalEnum(spec.volumeMode, 'spec.volumeMode', volumeModes));
  if (spec.capacity?.storage === undefined) errs.push(fieldErrors.required('spec.capacity'));
  errs.push(...validateResourceList(spec.capacity, 'spec.capacity').errs);
  errs.push(...validatePersistentSource(spec));
  return errs;
}

export const persistentVolumes = defineKind({
  group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', shortNames: ['pv'],
  protobuf: true,
  scope: 'Cluster',
  schema: define(core('PersistentVolume'), kindSchema('A piece of storage the administrator provisioned.', {
    spec: p(2, t.ref(PersistentVolumeSpec, 'Specification of the volume.'), 'always'),
    status: p(3, t.ref(define(core('PersistentVolumeStatus'), t.object({
      phase: p(1, s('Pending, Available, Bound, Released or Failed.')), message: p(2, s('Why the volume is in this state.')),
      reason: p(3, s('Brief CamelCase reason of a failure.')), lastPhaseTransitionTime: p(4, t.ref(Time, 'When the phase last changed.')),
    }, 'Current status of a persistent volume.')), 'Current status; read-only.'), 'always'),
  })),
  subresources: { status: statusSubresource },
  strategy: {
    defaults(pv) {
      pv.spec ??= {};
      pv.spec.persistentVolumeReclaimPolicy ??= 'Retain';
      pv.spec.volumeMode ??= 'Filesystem';
      pv.status ??= {};
      pv.status.phase ??= 'Pending';
    },
    prepareForCreate(pv) {
      pv.status = { phase: 'Pending' };
    },
    validate: validatePV,
    validateUpdate: (pv) => validatePV(pv),
  },
  printerColumns: [
    nameColumn,
    { name: 'Capacity', type: 'string', description: 'Capacity of the volume.', value: (pv) => pv.spec?.capacity?.storage ?? '' },
    { name: 'Access Modes', type: 'string', description: 'How the volume can be mounted.', value: (pv) => modesText(pv.spec?.accessModes) },
    { name: 'Reclaim Policy', type: 'string', description: 'What happens to the volume once released.', value: (pv) => pv.spec?.persistentVolumeReclaimPolicy ?? '' },
    { name: 'Status', type: 'string', description: 'Phase of the volume.', value: (pv) => pv.status?.phase ?? '' },
    { name: 'Claim', type: 'string', description: 'The claim bound to the volume.', value: (pv) => (pv.spec?.claimRef ? `${pv.spec.claimRef.namespace}/${pv.spec.claimRef.name}` : '') },
    { name: 'StorageClass', type: 'string', description: 'StorageClass of the volume.', value: (pv) => pv.spec?.storageClassName ?? '' },
    { name: 'VolumeAttributesClass', type: 'string', description: 'VolumeAttributesClass of the volume.', value: (pv) => pv.spec?.volumeAttributesClassName || '<unset>' },
    { name: 'Reason', type: 'string', description: 'Reason of a failure.', value: (pv) => pv.status?.reason ?? '' },
    ageColumn,
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Filesystem or Block.', value: (pv) => pv.spec?.volumeMode ?? '' },
  ],
});

function validatePVC(pvc: KubeObject): FieldError[] {
  const spec: Obj = pvc.spec ?? {};
  const errs = validateAccessModes(spec.accessModes, 'spec.accessModes', 'at least 1 access mode is required');
  errs.push(...optionalEnum(spec.volumeMode, 'spec.volumeMode', volumeModes));
  if (spec.resources?.requests?.storage === undefined) errs.push(fieldErrors.required('spec.resources[storage]'));
  errs.push(...validateResourceList(spec.resources?.requests, 'spec.resources.requests').errs);
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  return errs;
}

function validatePVCUpdate(pvc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validatePVC(pvc);
  // Only the requests (expansion), a binding's volumeName and the attributes class may change.
  const strip = (spec: Obj | undefined) => {
    const { resources, volumeAttributesClassName, volumeName, ...rest } = spec ?? {};
    return { ...rest, limits: resources?.limits, volumeName: spec?.volumeName && old.spec?.volumeName ? volumeName : undefined };
  };
  if (!deepEqual(strip(pvc.spec), strip(old.spec))) {
    errs.push(fieldErrors.forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  }
  return errs;
}

export const persistentVolumeClaims = defineKind({
  group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', shortNames: ['pvc'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('PersistentVolumeClaim'), kindSchema('A user\'s request for, and claim to, a persistent volume.', {
    spec: p(2, t.ref(PersistentVolumeClaimSpec, 'What the claim asks for.'), 'always'),
    status: p(3, t.ref(define(core('PersistentVolumeClaimStatus'), t.object({
      phase: p(1, s('Pending, Bound or Lost.')),
      accessModes: p(2, t.array(s(), 'Access modes of the bound volume.', { listType: 'atomic' })),
      capacity: p(3, resourceList('Capacity of the bound volume.')),
      conditions: p(4, mergedBy('type', t.ref(define(core('PersistentVolumeClaimCondition'), t.object({
        type: p(1, s('Type of the condition.')), status: p(2, s('True, False or Unknown.')),
        lastProbeTime: p(3, t.ref(Time, 'When the condition was last probed.'), 'always'),
        lastTransitionTime: p(4, t.ref(Time, 'When the status last changed.'), 'always'),
        reason: p(5, s('Machine-readable reason.')), message: p(6, s('Human-readable details.')),
      }, 'A condition of a claim.', { required: ['type', 'status'] }))), 'Current conditions of the claim.')),
      allocatedResources: p(5, resourceList('Resources allocated to the claim.')),
      allocatedResourceStatuses: p(7, { ...t.map(s(), 'Status of resize operations per resource.'), mapType: 'granular' }),
      currentVolumeAttributesClassName: p(8, s('Current VolumeAttributesClass of the bound volume.')),
      modifyVolumeStatus: p(9, t.ref(define(core('ModifyVolumeStatus'), t.object({
        targetVolumeAttributesClassName: p(1, s('Target class of the modification.')), status: p(2, s('Pending, InProgress or Infeasible.')),
      }, 'Status of a volume modification.', { required: ['status'] })), 'Status of a volume modification.')),
    }, 'Current status of a claim.')), 'Current status; read-only.'), 'always'),
  })),
  subresources: { status: { ...statusSubresource, validateUpdate: validatePersistentVolumeClaimStatusUpdate } },
  strategy: {
    defaults(pvc) {
      pvc.spec ??= {};
      pvc.spec.volumeMode ??= 'Filesystem';
    },
    prepareForCreate(pvc) {
      pvc.status = { phase: 'Pending' };
    },
    validate: validatePVC,
    validateUpdate: validatePVCUpdate,
  },
  printerColumns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'Phase of the claim.', value: (c) => c.status?.phase ?? '' },
    { name: 'Volume', type: 'string', description: 'The volume bound to the claim.', value: (c) => c.spec?.volumeName ?? '' },
    { name: 'Capacity', type: 'string', description: 'Capacity of the bound volume.', value: (c) => c.status?.capacity?.storage ?? '' },
    { name: 'Access Modes', type: 'string', description: 'Access modes of the bound volume.', value: (c) => modesText(c.status?.accessModes) },
    { name: 'StorageClass', type: 'string', description: 'StorageClass of the claim.', value: (c) => c.spec?.storageClassName ?? '' },
    { name: 'VolumeAttributesClass', type: 'string', description: 'VolumeAttributesClass of the claim.', value: (c) => c.spec?.volumeAttributesClassName || '<unset>' },
    ageColumn,
    { name: 'VolumeMode', type: 'string', priority: 1, description: 'Filesystem or Block.', value: (c) => c.spec?.volumeMode ?? '' },
  ],
});
