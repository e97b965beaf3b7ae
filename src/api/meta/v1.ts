// Shared meta types (group meta, version v1): object and list metadata,
// references, Status, DeleteOptions and discovery documents. Declared once here;
// kinds refer to them by name.

import { definitionPrefix } from '../../machinery/vocabulary.js';
import { define, p, t } from '../schema.js';

const meta = (name: string) => `${definitionPrefix}.apimachinery.meta.v1.${name}`;

export const Time = define(meta('Time'), { ...t.time('A timestamp in RFC 3339 form, with second precision.'), protoMessage: 'time' });
export const MicroTime = define(meta('MicroTime'), { ...t.time('A timestamp in RFC 3339 form, with microsecond precision.'), protoMessage: 'microTime' });
export const FieldsV1 = define(meta('FieldsV1'), { ...t.freeForm('A set of fields as a trie of f:, k:, v: and i: keys, used by managedFields.'), protoMessage: 'fieldsV1' });

export const OwnerReference = define(meta('OwnerReference'), t.object({
  apiVersion: p(5, t.string('API version of the owner.')),
  kind: p(1, t.string('Kind of the owner.')),
  name: p(3, t.string('Name of the owner.')),
  uid: p(4, t.string('UID of the owner; the reference holds only while the UID matches.')),
  controller: p(6, t.bool('True when the owner is the managing controller of this object.')),
  blockOwnerDeletion: p(7, t.bool('When true, foreground deletion of the owner waits until this object is gone.')),
}, 'Points at an object that owns this one; an object whose owners are all gone is collected.', {
  required: ['apiVersion', 'kind', 'name', 'uid'], mapType: 'atomic',
}));

export const ManagedFieldsEntry = define(meta('ManagedFieldsEntry'), t.object({
  manager: p(1, t.string('Name of the workflow that manages these fields.')),
  operation: p(2, t.string('Apply or Update: the kind of write that set the fields.')),
  apiVersion: p(3, t.string('Version of the object the field set is expressed in.')),
  time: p(4, t.ref(Time, 'When the entry last changed.')),
  fieldsType: p(6, t.string('Format of the field set; only FieldsV1.')),
  fieldsV1: p(7, t.ref(FieldsV1, 'The set of fields.')),
  subresource: p(8, t.string('Sub-resource that was written, if any.')),
}, 'Records which fields a manager owns and how it set them.'));

export const ObjectMeta = define(meta('ObjectMeta'), t.object({
  name: p(1, t.string('Unique name of the object within its namespace (or the cluster for cluster-scoped kinds). Cannot be updated.')),
  generateName: p(2, t.string('Prefix from which the server makes a unique name when name is empty; a random suffix of five characters is appended.')),
  namespace: p(3, t.string('Namespace the object lives in; empty for cluster-scoped kinds. Cannot be updated.')),
  selfLink: p(4, t.string('Deprecated and never set.')),
  uid: p(5, t.string('Unique identity of the object over time, set by the server on create. Read-only.')),
  resourceVersion: p(6, t.string('Opaque version of the object, used for optimistic concurrency, watches and consistent reads. Read-only.')),
  generation: p(7, t.int64('Sequence number of changes to the desired state. Read-only.'), 'always'),
  creationTimestamp: p(8, t.ref(Time, 'When the object was created. Read-only.'), 'always'),
  deletionTimestamp: p(9, t.ref(Time, 'When the object will be removed; set by the server when deletion is requested. Read-only.')),
  deletionGracePeriodSeconds: p(10, t.int64('Seconds the object is given to terminate gracefully. Read-only.')),
  labels: p(11, t.map(t.string(), 'Key/value pairs for organising and selecting objects.')),
  annotations: p(12, t.map(t.string(), 'Free-form key/value data kept with the object, not used for selection.')),
  ownerReferences: p(13, t.array(t.ref(OwnerReference), 'Objects this one depends on; when all owners are gone the object is collected.', {
    patchMergeKey: 'uid', patchStrategy: 'merge', listType: 'map', listMapKeys: ['uid'],
  })),
  finalizers: p(14, t.array(t.string(), 'Names that must be removed before the object is removed from the store.', {
    patchStrategy: 'merge', listType: 'set',
  })),
  managedFields: p(17, t.array(t.ref(ManagedFieldsEntry), 'Which manager owns which fields; maintained by the server.')),
}, 'Metadata that every persisted object carries.'));

export const LabelSelectorRequirement = define(meta('LabelSelectorRequirement'), t.object({
  key: p(1, t.string('The label key the selector applies to.'), 'always'),
  operator: p(2, t.string('In, NotIn, Exists or DoesNotExist.')),
  values: p(3, t.array(t.string(), 'Values for In and NotIn (at least one); empty for Exists and DoesNotExist.', { listType: 'atomic' })),
}, 'A label key, an operator and values, all of which an object\'s labels must satisfy.', { required: ['key', 'operator'] }));

export const LabelSelector = define(meta('LabelSelector'), t.object({
  matchLabels: p(1, t.map(t.string(), 'Labels an object must carry with exactly these values.')),
  matchExpressions: p(2, t.array(t.ref(LabelSelectorRequirement), 'Requirements an object\'s labels must all meet.', { listType: 'atomic' })),
}, 'Selects objects by their labels: every matchLabels entry and every expression must hold; an empty selector selects everything.', { mapType: 'atomic' }));

/** A condition of an object, in the shape shared across groups (Service, PodDisruptionBudget, ...). */
export const Condition = define(meta('Condition'), t.object({
  type: p(1, t.string('Type of the condition, in CamelCase.')),
  status: p(2, t.string('True, False or Unknown.')),
  observedGeneration: p(3, t.int64('The .metadata.generation the condition was set for.')),
  lastTransitionTime: p(4, t.ref(Time, 'When the condition last changed status.'), 'always'),
  reason: p(5, t.string('Machine-readable reason of the last change, in CamelCase.')),
  message: p(6, t.string('Human-readable details of the last change.')),
}, 'One aspect of the current state of an object.', { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] }));

export const ListMeta = define(meta('ListMeta'), t.object({
  selfLink: p(1, t.string('Deprecated and never set.')),
  resourceVersion: p(2, t.string('Version of the store at which the list was read.')),
  continue: p(3, t.string('Opaque token for the next page; empty on the last page.')),
  remainingItemCount: p(4, t.int64('Items left after this page, when the server can tell.')),
}, 'Metadata of a list.'));

export const StatusCause = define(meta('StatusCause'), t.object({
  reason: p(1, t.string('Machine-readable cause of the error.')),
  message: p(2, t.string('Human-readable description of the cause.')),
  field: p(3, t.string('Path of the field that caused the error, when there is one.')),
}, 'One cause of an error.'));

export const StatusDetails = define(meta('StatusDetails'), t.object({
  name: p(1, t.string('Name of the resource the status is about.')),
  group: p(2, t.string('Group of the resource.')),
  kind: p(3, t.string('Kind (or resource) the status is about.')),
  uid: p(6, t.string('UID of the resource.')),
  causes: p(4, t.array(t.ref(StatusCause), 'Detailed causes.')),
  retryAfterSeconds: p(5, t.int32('Seconds to wait before retrying.'), 'always'),
}, 'Extra data about a Status.'));

export const Status = define(meta('Status'), t.object({
  apiVersion: t.string('Schema version of this representation.'),
  kind: t.string('Kind of this representation: Status.'),
  metadata: p(1, t.ref(ListMeta, 'Standard list metadata.')),
  status: p(2, t.string('Success or Failure.')),
  message: p(3, t.string('Human-readable description.')),
  reason: p(4, t.string('Machine-readable reason; empty when none applies.')),
  details: p(5, t.ref(StatusDetails, 'Data about the reason.')),
  code: p(6, t.int32('HTTP status code.'), 'always'),
}, 'The result of an operation that returns no object.'));

export const Preconditions = define(meta('Preconditions'), t.object({
  uid: p(1, t.string('The object must have this UID.'), 'whenSet'),
  resourceVersion: p(2, t.string('The object must have this resourceVersion.'), 'whenSet'),
}, 'Conditions the object must meet for the operation to happen.'));

export const DeleteOptions = define(meta('DeleteOptions'), t.object({
  apiVersion: t.string('Schema version of this representation.'),
  kind: t.string('Kind of this representation: DeleteOptions.'),
  gracePeriodSeconds: p(1, t.int64('Seconds before the object is removed; 0 means at once.')),
  preconditions: p(2, t.ref(Preconditions, 'Must hold for the delete to happen.')),
  orphanDependents: p(3, t.bool('Deprecated: use propagationPolicy. True orphans the dependents.')),
  propagationPolicy: p(4, t.string('Orphan, Background or Foreground: what happens to dependents.'), 'whenSet'),
  dryRun: p(5, t.array(t.string(), 'All: run every stage but do not persist.')),
  ignoreStoreReadErrorWithClusterBreakingPotential: p(6, t.bool('Delete an object that cannot be read from the store.')),
}, 'Options of a delete request.'));

export const Patch = define(meta('Patch'), t.object({}, 'A patch body; its format follows the Content-Type header.'));

export const WatchEvent = define(meta('WatchEvent'), t.object({
  type: p(1, t.string('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.')),
  object: p(2, { ...t.freeForm('The object of the event, or a Status for ERROR.'), protoMessage: 'rawExtension' }, 'always'),
}, 'One event of a watch stream.', { required: ['type', 'object'] }));

export const GroupVersionForDiscovery = define(meta('GroupVersionForDiscovery'), t.object({
  groupVersion: t.string('group/version, or v1 for the core group.'),
  version: t.string('The version alone.'),
}, 'A version of a group.', { required: ['groupVersion', 'version'] }));

export const ServerAddressByClientCIDR = define(meta('ServerAddressByClientCIDR'), t.object({
  clientCIDR: t.string('Client network to which this address applies.'),
  serverAddress: t.string('Address clients in that network should use.'),
}, 'Server address for a client network.'));

export const APIVersions = define(meta('APIVersions'), t.object({
  apiVersion: t.string(), kind: t.string(),
  versions: t.array(t.string(), 'Versions of the core group.'),
  serverAddressByClientCIDRs: t.array(t.ref(ServerAddressByClientCIDR)),
}, 'The versions of the core API group.', { required: ['versions', 'serverAddressByClientCIDRs'] }));

export const APIGroup = define(meta('APIGroup'), t.object({
  apiVersion: t.string(), kind: t.string(),
  name: t.string('Name of the group.'),
  versions: t.array(t.ref(GroupVersionForDiscovery), 'Versions served.'),
  preferredVersion: t.ref(GroupVersionForDiscovery, 'The version clients should prefer.'),
  serverAddressByClientCIDRs: t.array(t.ref(ServerAddressByClientCIDR)),
}, 'A named API group and its versions.', { required: ['name', 'versions'] }));

export const APIGroupList = define(meta('APIGroupList'), t.object({
  apiVersion: t.string(), kind: t.string(),
  groups: t.array(t.ref(APIGroup), 'Groups served.'),
}, 'The named API groups.', { required: ['groups'] }));

export const APIResource = define(meta('APIResource'), t.object({
  name: t.string('Plural resource name, or resource/subresource.'),
  singularName: t.string('Singular resource name.'),
  namespaced: t.bool('Whether objects live in namespaces.'),
  group: t.string('Group, when it differs from the list\'s.'),
  version: t.string('Version, when it differs from the list\'s.'),
  kind: t.string('Kind of the objects.'),
  verbs: t.array(t.string(), 'Verbs the resource offers.'),
  shortNames: t.array(t.string(), 'Short aliases.'),
  categories: t.array(t.string(), 'Groupings such as all.'),
  storageVersionHash: t.string('Hash of the storage version.'),
}, 'One resource of a group version.', { required: ['name', 'singularName', 'namespaced', 'kind', 'verbs'] }));

export const APIResourceList = define(meta('APIResourceList'), t.object({
  apiVersion: t.string(), kind: t.string(),
  groupVersion: t.string('The group/version described.'),
  resources: t.array(t.ref(APIResource), 'Resources served.'),
}, 'The resources of one group version.', { required: ['groupVersion', 'resources'] }));
