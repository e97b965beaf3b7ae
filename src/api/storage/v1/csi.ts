// storage/v1 kinds of CSI drivers: CSIDriver (how a driver wants to be
// called), CSINode (the drivers of a node), VolumeAttachment (a request to
// attach a volume to a node, with the attacher's status) and
// CSIStorageCapacity (capacity a driver reports for a topology and class).

import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, statusSubresource, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { checkName, fieldPath, isDns1123Subdomain, type NameCheck } from '../../../machinery/validation.js';
import { parseQuantity } from '../../../machinery/quantity.js';
import { validateLabelSelector } from '../../../machinery/selectors.js';
import { LabelSelector, Time } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { Quantity } from '../../core/v1/containers.js';
import { PersistentVolumeSpec } from '../../core/v1/storage.js';
import { definitionsOf, immutable } from '../../sharedrules.js';

type Obj = Record<string, any>;
const storage = definitionsOf('storage');
const s = t.string;

const csiDriverNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const csiDriverNameRe = new RegExp(`^${csiDriverNameFmt}$`);

/** Upstream's ValidateCSIDriverName: at most 63 characters of a qualified name's alphabet. */
export const csiDriverNameErrors: NameCheck = (name) => {
  const errs: string[] = [];
  if (name.length > 63) errs.push('must be no more than 63 characters');
  if (!csiDriverNameRe.test(name)) errs.push(`must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${csiDriverNameFmt}')`);
  return errs;
};

function validateDriverName(name: string | undefined, field: string): FieldError[] {
  if (!name) return [fieldErrors.required(field, '')];
  return csiDriverNameErrors(name).map((m) => (m.startsWith('must be no more') ? fieldErrors.tooLong(field, 63) : fieldErrors.invalid(field, name, m)));
}

// ---- CSIDriver ----

const fsGroupPolicies = ['File', 'None', 'ReadWriteOnceWithFSType'];
const lifecycleModes = ['Ephemeral', 'Persistent'];

const csiDriverSchema = kindSchema('How a CSI driver wants to be called; named as the driver.', {
  spec: p(2, t.ref(define(storage('CSIDriverSpec'), t.object({
    attachRequired: p(1, t.bool('Whether volumes need attaching (ControllerPublishVolume) before mounting; true when unset; immutable.')),
    podInfoOnMount: p(2, t.bool('Whether mounts get the pod\'s name, namespace, UID and service account.')),
    volumeLifecycleModes: p(3, t.array(s(undefined, { enum: lifecycleModes }), 'Persistent and/or Ephemeral; Persistent when unset; immutable.', { listType: 'set' })),
    storageCapacity: p(4, t.bool('Whether the scheduler considers the driver\'s CSIStorageCapacity objects.')),
    fsGroupPolicy: p(5, s('Whether the driver supports changing a volume\'s ownership to the pod\'s fsGroup; immutable.', { enum: fsGroupPolicies }), 'whenSet'),
    tokenRequests: p(6, t.array(t.ref(define(storage('TokenRequest'), t.object({
      audience: p(1, s('Audience of the token.')),
      expirationSeconds: p(2, t.int64('Lifetime of the token; at least 600.')),
    }, 'A service account token the driver wants.', { required: ['audience'] }))), 'Service account tokens passed to the driver at mount.', { listType: 'atomic' })),
    requiresRepublish: p(7, t.bool('Whether NodePublishVolume is called again periodically.')),
    seLinuxMount: p(8, t.bool('Whether the driver supports the -o context mount option.')),
  }, 'How a CSI driver wants to be called.')), 'How the driver wants to be called.'), 'always'),
}, ['spec']);

function validateCsiDriver(d: KubeObject): FieldError[] {
  const spec: Obj = d.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.attachRequired == null) errs.push(fieldErrors.required('spec.attachedRequired', ''));
  if (spec.podInfoOnMount == null) errs.push(fieldErrors.required('spec.podInfoOnMount', ''));
  if (spec.storageCapacity == null) errs.push(fieldErrors.required('spec.storageCapacity', ''));
  if (spec.fsGroupPolicy != null && !fsGroupPolicies.includes(spec.fsGroupPolicy)) errs.push(fieldErrors.notSupported('spec.fsGroupPolicy', spec.fsGroupPolicy, fsGroupPolicies));
  ((spec.volumeLifecycleModes ?? []) as string[]).forEach((mode) => {
    if (!lifecycleModes.includes(mode)) errs.push(fieldErrors.notSupported('spec.volumeLifecycleModes', mode, lifecycleModes));
  });
  const audiences = new Set<string>();
  ((spec.tokenRequests ?? []) as Obj[]).forEach((req, i) => {
    const at = fieldPath('spec.tokenRequests', i);
    if (audiences.has(req.audience)) errs.push(fieldErrors.duplicate(`${at}.audience`, req.audience));
    audiences.add(req.audience);
    if (req.expirationSeconds != null) {
      if (req.expirationSeconds < 600) errs.push(fieldErrors.invalid(`${at}.expirationSeconds`, req.expirationSeconds, 'may not specify a duration less than 10 minutes'));
      if (req.expirationSeconds > 2 ** 32) errs.push(fieldErrors.invalid(`${at}.expirationSeconds`, req.expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
    }
  });
  return errs;
}

const yesNo = (v: unknown) => v === true;

export const csiDrivers = defineKind({
  group: vocabulary.storageGroup, version: 'v1', kind: 'CSIDriver', plural: 'csidrivers',
  protobuf: true,
  scope: 'Cluster',
  nameCheck: csiDriverNameErrors,
  schema: define(storage('CSIDriver'), csiDriverSchema),
  strategy: {
    defaults(d) {
      const spec: Obj = (d.spec ??= {});
      spec.attachRequired ??= true;
      spec.podInfoOnMount ??= false;
      spec.storageCapacity ??= false;
      spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
      spec.requiresRepublish ??= false;
      spec.seLinuxMount ??= false;
      if (!spec.volumeLifecycleModes?.length) spec.volumeLifecycleModes = ['Persistent'];
    },
    validate: validateCsiDriver,
    validateUpdate: (d, old) => [
      ...validateCsiDriver(d),
      ...immutable(d.spec?.attachRequired, old.spec?.attachRequired, 'spec.attachedRequired'),
      ...immutable(d.spec?.fsGroupPolicy, old.spec?.fsGroupPolicy, 'spec.fsGroupPolicy'),
      ...immutable(d.spec?.volumeLifecycleModes, old.spec?.volumeLifecycleModes, 'spec.volumeLifecycleModes'),
    ],
  },
  printerColumns: [
    nameColumn,
    { name: 'AttachRequired', type: 'boolean', description: 'Whether volumes need attaching.', value: (d) => yesNo(d.spec?.attachRequired) },
    { name: 'PodInfoOnMount', type: 'boolean', description: 'Whether mounts get pod information.', value: (d) => yesNo(d.spec?.podInfoOnMount) },
    { name: 'StorageCapacity', type: 'boolean', description: 'Whether capacity is tracked.', value: (d) => yesNo(d.spec?.storageCapacity) },
    { name: 'TokenRequests', type: 'string', description: 'Audiences of the tokens passed at mount.', value: (d) => ((d.spec?.tokenRequests ?? []) as Obj[]).map((r) => r.audience).join(',') || '<unset>' },
    { name: 'RequiresRepublish', type: 'boolean', description: 'Whether mounts are republished.', value: (d) => yesNo(d.spec?.requiresRepublish) },
    { name: 'Modes', type: 'string', description: 'Volume lifecycle modes.', value: (d) => ((d.spec?.volumeLifecycleModes ?? []) as string[]).join(',') || '<none>' },
    ageColumn,
  ],
});

// ---- CSINode ----

const csiNodeSchema = kindSchema('The CSI drivers of a node; named as the node.', {
  spec: p(2, t.ref(define(storage('CSINodeSpec'), t.object({
    drivers: p(1, t.array(t.ref(define(storage('CSINodeDriver'), t.object({
      name: p(1, s('Name of the driver.')),
      nodeID: p(2, s('The node as the driver names it.')),
      topologyKeys: p(3, t.array(s(), 'Topology labels the driver supports.', { listType: 'atomic' })),
      allocatable: p(4, t.ref(define(storage('VolumeNodeResources'), t.object({
        count: p(1, t.int32('Most volumes of the driver the node can use.')),
      }, 'Limits of a driver on a node.')), 'Limits of the driver on the node.')),
    }, 'One CSI driver of a node.', { required: ['name', 'nodeID'] }))), 'Drivers on the node.', { patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name'] }), 'always'),
  }, 'The CSI drivers of a node.', { required: ['drivers'] })), 'The drivers of the node.'), 'always'),
}, ['spec']);

const maxNodeIdLength = 192;

function validateCsiNode(n: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ((n.spec?.drivers ?? []) as Obj[]).forEach((d, i) => {
    const at = fieldPath('spec.drivers', i);
    errs.push(...validateDriverName(d.name, `${at}.name`));
    if (d.name && names.has(d.name)) errs.push(fieldErrors.duplicate(at, d.name));
    names.add(d.name);
    if (!d.nodeID) errs.push(fieldErrors.required(`${at}.nodeID`, 'nodeID must not be empty'));
    else if (d.nodeID.length > maxNodeIdLength) errs.push(fieldErrors.invalid(`${at}.nodeID`, d.nodeID, `must be ${maxNodeIdLength} characters or less`));
    const keys = new Set<string>();
    ((d.topologyKeys ?? []) as string[]).forEach((key, j) => {
      const kat = fieldPath(`${at}.topologyKeys`, j);
      if (!key) errs.push(fieldErrors.required(kat, ''));
      if (keys.has(key)) errs.push(fieldErrors.duplicate(kat, key));
      keys.add(key);
    });
    const count = d.allocatable?.count;
    if (count != null && count < 0) errs.push(fieldErrors.invalid(`${at}.allocatable.count`, count, 'must be greater than or equal to 0'));
  });
  return errs;
}

/** A driver present before and after an update keeps its node ID and topology keys, as upstream. */
function validateCsiNodeUpdate(n: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateCsiNode(n);
  const before = new Map<string, Obj>(((old.spec?.drivers ?? []) as Obj[]).map((d) => [d.name, d]));
  ((n.spec?.drivers ?? []) as Obj[]).forEach((d, i) => {
    const was = before.get(d.name);
    if (!was) return;
    const at = fieldPath('spec.drivers', i);
    if (d.nodeID !== was.nodeID) errs.push(fieldErrors.invalid(`${at}.nodeID`, d.nodeID, 'field is immutable'));
    if (!deepEqual(d.topologyKeys ?? [], was.topologyKeys ?? [])) errs.push(fieldErrors.invalid(`${at}.topologyKeys`, d.topologyKeys ?? [], 'field is immutable'));
  });
  return errs;
}

export const csiNodes = defineKind({
  group: vocabulary.storageGroup, version: 'v1', kind: 'CSINode', plural: 'csinodes',
  protobuf: true,
  scope: 'Cluster',
  schema: define(storage('CSINode'), csiNodeSchema),
  strategy: { validate: validateCsiNode, validateUpdate: validateCsiNodeUpdate },
  printerColumns: [
    nameColumn,
    { name: 'Drivers', type: 'integer', description: 'Drivers registered on the node.', value: (n) => (n.spec?.drivers ?? []).length },
    ageColumn,
  ],
});

// ---- VolumeAttachment ----

const VolumeError = define(storage('VolumeError'), t.object({
  time: p(1, t.ref(Time, 'When the error happened.'), 'always'),
  message: p(2, s('What went wrong (may be logged: no secrets).')),
}, 'An error of an attach or detach.'));

const volumeAttachmentSchema = kindSchema('A request to attach a volume to a node, and the attacher\'s answer.', {
  spec: p(2, t.ref(define(storage('VolumeAttachmentSpec'), t.object({
    attacher: p(1, s('The CSI driver that attaches (its name).')),
    source: p(2, t.ref(define(storage('VolumeAttachmentSource'), t.object({
      persistentVolumeName: p(1, s('The PersistentVolume to attach.'), 'whenSet'),
      inlineVolumeSpec: p(2, t.ref(PersistentVolumeSpec, 'An inline volume of a pod, translated to a persistent volume\'s spec.')),
    }, 'The volume to attach: exactly one of its fields.')), 'The volume to attach.'), 'always'),
    nodeName: p(3, s('The node to attach the volume to.')),
  }, 'What to attach where; immutable.', { required: ['attacher', 'source', 'nodeName'] })), 'What to attach where.'), 'always'),
  status: p(3, t.ref(define(storage('VolumeAttachmentStatus'), t.object({
    attached: p(1, t.bool('Whether the volume is attached.'), 'always'),
    attachmentMetadata: p(2, t.map(s(), 'What the attacher returned, for the mount.')),
    attachError: p(3, t.ref(VolumeError, 'The last error of attaching.')),
    detachError: p(4, t.ref(VolumeError, 'The last error of detaching.')),
  }, 'The attacher\'s answer.', { required: ['attached'] })), 'The attacher\'s answer.'), 'always'),
}, ['spec']);

function validateVolumeAttachment(va: KubeObject): FieldError[] {
  const spec: Obj = va.spec ?? {};
  const errs = validateDriverName(spec.attacher, 'spec.attacher');
  const source: Obj = spec.source ?? {};
  const sources = [source.persistentVolumeName != null, source.inlineVolumeSpec != null].filter(Boolean).length;
  if (sources !== 1) errs.push(fieldErrors.invalid('spec.source', source, 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (source.persistentVolumeName === '') errs.push(fieldErrors.required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  if (!spec.nodeName) errs.push(fieldErrors.required('spec.nodeName', ''));
  else errs.push(...checkName(isDns1123Subdomain, 'spec.nodeName', spec.nodeName));
  return errs;
}

export const volumeAttachments = defineKind({
  group: vocabulary.storageGroup, version: 'v1', kind: 'VolumeAttachment', plural: 'volumeattachments',
  protobuf: true,
  scope: 'Cluster',
  schema: define(storage('VolumeAttachment'), volumeAttachmentSchema),
  subresources: { status: statusSubresource },
  strategy: {
    validate: validateVolumeAttachment,
    validateUpdate: (va, old) => [...validateVolumeAttachment(va), ...(deepEqual(va.spec, old.spec) ? [] : [fieldErrors.invalid('spec', va.spec, 'field is immutable')])],
  },
  printerColumns: [
    nameColumn,
    { name: 'Attacher', type: 'string', format: 'name', description: 'The CSI driver that attaches.', value: (va) => va.spec?.attacher ?? '' },
    { name: 'PV', type: 'string', description: 'The PersistentVolume attached.', value: (va) => va.spec?.source?.persistentVolumeName ?? '' },
    { name: 'Node', type: 'string', description: 'The node attached to.', value: (va) => va.spec?.nodeName ?? '' },
    { name: 'Attached', type: 'boolean', description: 'Whether the volume is attached.', value: (va) => va.status?.attached === true },
    ageColumn,
  ],
});

// ---- CSIStorageCapacity ----

const quantity = (n: number, d: string) => p(n, t.ref(Quantity, d));

const capacitySchema = kindSchema('Storage capacity a CSI driver reports for a topology segment and a StorageClass.', {
  nodeTopology: p(2, t.ref(LabelSelector, 'The nodes that can reach the storage.')),
  storageClassName: p(3, s('The StorageClass the capacity is for.')),
  capacity: quantity(4, 'Capacity available for new volumes.'),
  maximumVolumeSize: quantity(5, 'The largest volume that can be made now.'),
}, ['storageClassName']);

function nonNegative(value: unknown, field: string): FieldError[] {
  if (value == null) return [];
  try {
    return parseQuantity(String(value)).nanos < 0n ? [fieldErrors.invalid(field, String(value), 'must be greater than or equal to 0')] : [];
  } catch {
    return [];
  }
}

function validateCapacity(c: KubeObject): FieldError[] {
  const errs = validateLabelSelector(c.nodeTopology, 'nodeTopology');
  if (!c.storageClassName) errs.push(fieldErrors.required('storageClassName', ''));
  else errs.push(...checkName(isDns1123Subdomain, 'storageClassName', c.storageClassName));
  errs.push(...nonNegative(c.capacity, 'capacity'), ...nonNegative(c.maximumVolumeSize, 'maximumVolumeSize'));
  return errs;
}

export const csiStorageCapacities = defineKind({
  group: vocabulary.storageGroup, version: 'v1', kind: 'CSIStorageCapacity', plural: 'csistoragecapacities',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(storage('CSIStorageCapacity'), capacitySchema),
  strategy: {
    validate: validateCapacity,
    validateUpdate: (c, old) => [...validateCapacity(c), ...immutable(c.storageClassName, old.storageClassName, 'storageClassName'), ...immutable(c.nodeTopology, old.nodeTopology, 'nodeTopology')],
  },
  printerColumns: [
    nameColumn,
    { name: 'StorageClassName', type: 'string', description: 'The StorageClass of the capacity.', value: (c) => c.storageClassName ?? '' },
    { name: 'Capacity', type: 'string', description: 'Capacity available for new volumes.', value: (c) => (c.capacity == null ? '<unset>' : String(c.capacity)) },
  ],
});
