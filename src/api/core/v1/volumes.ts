// The volume sources a pod can mount (upstream 1.32's VolumeSource), with
// upstream's protobuf field numbers. A Volume embeds its source: the source's
// fields are the volume's in JSON and one nested message on the wire.

import { define, p, t, type Schema } from '../../schema.js';
import { LabelSelector, ObjectMeta } from '../../meta/v1.js';
import { core, LocalObjectReference } from './common.js';
import { ObjectFieldSelector, Quantity, ResourceFieldSelector, resourceList } from './containers.js';

const s = t.string;
const readOnly = (n: number) => p(n, t.bool('Mounts the volume read-only.'));
const fsType = (n: number) => p(n, s('Filesystem type to mount (ext4, xfs, ntfs).'));
const secretRef = (n: number) => p(n, t.ref(LocalObjectReference, 'Secret holding credentials.'));
const strings = (description: string): Schema => t.array(s(), description, { listType: 'atomic' });
const source = (name: string, description: string, fields: Record<string, Schema>, required?: string[], extra: Partial<Schema> = {}) =>
  define(core(name), t.object(fields, description, { ...(required ? { required } : {}), ...extra }));

const KeyToPath = define(core('KeyToPath'), t.object({
  key: p(1, s('The key to project.')),
  path: p(2, s('Relative path of the file to map the key to; may not contain \'..\'.')),
  mode: p(3, t.int32('Mode bits of the file (0000-0777).')),
}, 'Maps a key to a path within a volume.', { required: ['key', 'path'] }));

const items = (n: number) => p(n, t.array(t.ref(KeyToPath), 'Keys to project, each to a path; every key when unset.', { listType: 'atomic' }));
const defaultMode = (n: number) => p(n, t.int32('Mode bits of created files (0000-0777); 0644 when unset.'));
const optional = (n: number, what: string) => p(n, t.bool(`Whether the ${what} may be missing.`));
const embedsReference = { protoInline: [{ proto: 1, schema: LocalObjectReference }] };
const referenceName = { name: s('Name of the referent in the pod\'s namespace.', { default: '' }) };

const DownwardAPIVolumeFile = define(core('DownwardAPIVolumeFile'), t.object({
  path: p(1, s('Relative path of the file to create.')),
  fieldRef: p(2, t.ref(ObjectFieldSelector, 'A field of the pod (name, namespace, labels, annotations, uid).')),
  resourceFieldRef: p(3, t.ref(ResourceFieldSelector, 'A resource of a container.')),
  mode: p(4, t.int32('Mode bits of the file (0000-0777).')),
}, 'A file holding a field of the pod.', { required: ['path'] }));

const downwardItems = (n: number) => p(n, t.array(t.ref(DownwardAPIVolumeFile), 'Files to create.', { listType: 'atomic' }));

/** Names an object of any kind in one namespace (a claim's dataSource, an Ingress backend's resource). */
export const TypedLocalObjectReference = define(core('TypedLocalObjectReference'), t.object({
  apiGroup: p(1, s('Group of the referent; the core group when unset.')),
  kind: p(2, s('Kind of the referent.')),
  name: p(3, s('Name of the referent.')),
}, 'Names an object of any kind in the same namespace.', { required: ['kind', 'name'], mapType: 'atomic' }));

const PersistentVolumeClaimSpec = define(core('PersistentVolumeClaimSpec'), t.object({
  accessModes: p(1, strings('Access modes wanted: ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod.')),
  selector: p(4, t.ref(LabelSelector, 'Label query over volumes to bind to.')),
  resources: p(2, t.object({
    limits: p(1, resourceList('Maximum amount of storage allowed.')),
    requests: p(2, resourceList('Minimum amount of storage required.')),
  }, 'Storage the claim asks for.'), 'always'),
  volumeName: p(3, s('Name of the PersistentVolume backing the claim.')),
  storageClassName: p(5, s('Name of the StorageClass the claim needs.')),
  volumeMode: p(6, s('Filesystem or Block; Filesystem when unset.')),
  dataSource: p(7, t.ref(TypedLocalObjectReference, 'An existing object to fill the volume from.')),
  dataSourceRef: p(8, t.ref(define(core('TypedObjectReference'), t.object({
    apiGroup: p(1, s('Group of the referent; the core group when unset.')),
    kind: p(2, s('Kind of the referent.')),
    name: p(3, s('Name of the referent.')),
    namespace: p(4, s('Namespace of the referent.')),
  }, 'Names an object of any kind.', { required: ['kind', 'name'] })), 'An object to fill the volume from (any group).')),
  volumeAttributesClassName: p(9, s('VolumeAttributesClass the claim uses.')),
}, 'What a claim asks of a volume.'));

export { PersistentVolumeClaimSpec, KeyToPath };

/** The sources a volume may have: exactly one is set. */
export const VolumeSource = define(core('VolumeSource'), t.object({
  hostPath: p(1, t.ref(source('HostPathVolumeSource', 'A file or directory of the host.', {
    path: p(1, s('Path on the host.')),
    type: p(2, s('"", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice or BlockDevice.')),
  }, ['path']), 'A file or directory of the host machine.')),
  emptyDir: p(2, t.ref(source('EmptyDirVolumeSource', 'A temporary directory that lives as long as the pod.', {
    medium: p(1, s('"" (the node\'s default) or Memory.')),
    sizeLimit: p(2, t.ref(Quantity, 'Total local storage the directory may use.')),
  }), 'A temporary directory sharing the pod\'s lifetime.')),
  gcePersistentDisk: p(3, t.ref(source('GCEPersistentDiskVolumeSource', 'A GCE persistent disk.', {
    pdName: p(1, s('Name of the disk.')), fsType: fsType(2), partition: p(3, t.int32('Partition to mount.')), readOnly: readOnly(4),
  }, ['pdName']), 'Deprecated: a GCE persistent disk.')),
  awsElasticBlockStore: p(4, t.ref(source('AWSElasticBlockStoreVolumeSource', 'An AWS EBS disk.', {
    volumeID: p(1, s('ID of the EBS volume.')), fsType: fsType(2), partition: p(3, t.int32('Partition to mount.')), readOnly: readOnly(4),
  }, ['volumeID']), 'Deprecated: an AWS EBS disk.')),
  gitRepo: p(5, t.ref(source('GitRepoVolumeSource', 'Deprecated: a git repository cloned into an empty directory.', {
    repository: p(1, s('Repository URL.')), revision: p(2, s('Commit hash.')), directory: p(3, s('Target directory name.')),
  }, ['repository']), 'Deprecated: a git repository at a revision.')),
  secret: p(6, t.ref(source('SecretVolumeSource', 'The keys of a Secret as files.', {
    secretName: p(1, s('Name of the secret in the pod\'s namespace.')), items: items(2), defaultMode: defaultMode(3), optional: optional(4, 'secret or its keys'),
  }), 'A Secret\'s keys as files.')),
  nfs: p(7, t.ref(source('NFSVolumeSource', 'An NFS mount.', {
    server: p(1, s('Host name or IP of the NFS server.')), path: p(2, s('Path exported by the server.')), readOnly: readOnly(3),
  }, ['server', 'path']), 'An NFS mount on the host.')),
  iscsi: p(8, t.ref(source('ISCSIVolumeSource', 'An iSCSI disk.', {
    targetPortal: p(1, s('iSCSI target portal (IP or ip:port).')), iqn: p(2, s('Target iSCSI qualified name.')), lun: p(3, t.int32('Target LUN number.'), 'always'),
    iscsiInterface: p(4, s('Interface name; default (tcp) when unset.', { default: 'default' })), fsType: fsType(5), readOnly: readOnly(6),
    portals: p(7, strings('More target portals.')), chapAuthDiscovery: p(8, t.bool('iSCSI discovery CHAP authentication.')),
    chapAuthSession: p(11, t.bool('iSCSI session CHAP authentication.')), secretRef: secretRef(10), initiatorName: p(12, s('Custom initiator name.')),
  }, ['targetPortal', 'iqn', 'lun']), 'An iSCSI disk.')),
  glusterfs: p(9, t.ref(source('GlusterfsVolumeSource', 'A Glusterfs mount.', {
    endpoints: p(1, s('Endpoints object naming the Glusterfs servers.')), path: p(2, s('Glusterfs volume path.')), readOnly: readOnly(3),
  }, ['endpoints', 'path']), 'Deprecated: a Glusterfs mount.')),
  persistentVolumeClaim: p(10, t.ref(source('PersistentVolumeClaimVolumeSource', 'A PersistentVolumeClaim in the pod\'s namespace.', {
    claimName: p(1, s('Name of the claim.')), readOnly: readOnly(2),
  }, ['claimName']), 'A PersistentVolumeClaim in the pod\'s namespace.')),
  rbd: p(11, t.ref(source('RBDVolumeSource', 'A Rados Block Device.', {
    monitors: p(1, strings('Ceph monitors.')), image: p(2, s('Rados image name.')), fsType: fsType(3), pool: p(4, s('Rados pool; rbd when unset.', { default: 'rbd' })),
    user: p(5, s('Rados user; admin when unset.', { default: 'admin' })), keyring: p(6, s('Keyring path; /etc/ceph/keyring when unset.', { default: '/etc/ceph/keyring' })), secretRef: secretRef(7), readOnly: readOnly(8),
  }, ['monitors', 'image']), 'Deprecated: a Rados Block Device.')),
  flexVolume: p(12, t.ref(source('FlexVolumeSource', 'A volume of an exec-based plugin.', {
    driver: p(1, s('Name of the driver.')), fsType: fsType(2), secretRef: secretRef(3), readOnly: readOnly(4),
    options: p(5, t.map(s(), 'Extra options of the driver.')),
  }, ['driver']), 'Deprecated: a volume of an exec-based plugin.')),
  cinder: p(13, t.ref(source('CinderVolumeSource', 'An OpenStack Cinder volume.', {
    volumeID: p(1, s('ID of the volume.')), fsType: fsType(2), readOnly: readOnly(3), secretRef: secretRef(4),
  }, ['volumeID']), 'Deprecated: an OpenStack Cinder volume.')),
  cephfs: p(14, t.ref(source('CephFSVolumeSource', 'A CephFS mount.', {
    monitors: p(1, strings('Ceph monitors.')), path: p(2, s('Root path of the mount; / when unset.')), user: p(3, s('Rados user.')),
    secretFile: p(4, s('Path of the user\'s key ring.')), secretRef: secretRef(5), readOnly: readOnly(6),
  }, ['monitors']), 'Deprecated: a CephFS mount.')),
  flocker: p(15, t.ref(source('FlockerVolumeSource', 'A Flocker dataset.', {
    datasetName: p(1, s('Name of the dataset.')), datasetUUID: p(2, s('UUID of the dataset.')),
  }), 'Deprecated: a Flocker dataset.')),
  downwardAPI: p(16, t.ref(source('DownwardAPIVolumeSource', 'Fields of the pod as files.', {
    items: downwardItems(1), defaultMode: defaultMode(2),
  }), 'Fields of the pod as files.')),
  fc: p(17, t.ref(source('FCVolumeSource', 'A Fibre Channel disk.', {
    targetWWNs: p(1, strings('Target world wide names.')), lun: p(2, t.int32('Target LUN.')), fsType: fsType(3), readOnly: readOnly(4),
    wwids: p(5, strings('World wide identifiers; excludes targetWWNs and lun.')),
  }), 'A Fibre Channel disk.')),
  azureFile: p(18, t.ref(source('AzureFileVolumeSource', 'An Azure File share.', {
    secretName: p(1, s('Secret holding the storage account name and key.')), shareName: p(2, s('Share name.')), readOnly: readOnly(3),
  }, ['secretName', 'shareName']), 'Deprecated: an Azure File share.')),
  configMap: p(19, t.ref(source('ConfigMapVolumeSource', 'The keys of a ConfigMap as files.', {
    ...referenceName, items: items(2), defaultMode: defaultMode(3), optional: optional(4, 'ConfigMap or its keys'),
  }, undefined, embedsReference), 'A ConfigMap\'s keys as files.')),
  vsphereVolume: p(20, t.ref(source('VsphereVirtualDiskVolumeSource', 'A vSphere disk.', {
    volumePath: p(1, s('Path of the disk.')), fsType: fsType(2), storagePolicyName: p(3, s('Storage policy name.')), storagePolicyID: p(4, s('Storage policy ID.')),
  }, ['volumePath']), 'Deprecated: a vSphere disk.')),
  quobyte: p(21, t.ref(source('QuobyteVolumeSource', 'A Quobyte mount.', {
    registry: p(1, s('Quobyte registries (host:port, comma separated).')), volume: p(2, s('Quobyte volume name.')), readOnly: readOnly(3),
    user: p(4, s('User to map access to.')), group: p(5, s('Group to map access to.')), tenant: p(6, s('Tenant owning the volume.')),
  }, ['registry', 'volume']), 'Deprecated: a Quobyte mount.')),
  azureDisk: p(22, t.ref(source('AzureDiskVolumeSource', 'An Azure data disk.', {
    diskName: p(1, s('Name of the disk.')), diskURI: p(2, s('URI of the disk.')), cachingMode: p(3, s('None, ReadOnly or ReadWrite; ReadWrite when unset.', { default: 'ReadWrite' })),
    fsType: p(4, s('Filesystem type to mount; ext4 when unset.', { default: 'ext4' })), readOnly: p(5, { ...t.bool('Mounts the volume read-only.'), default: false }),
    kind: p(6, s('Shared, Dedicated or Managed; Shared when unset.', { default: 'Shared' })),
  }, ['diskName', 'diskURI']), 'Deprecated: an Azure data disk.')),
  photonPersistentDisk: p(23, t.ref(source('PhotonPersistentDiskVolumeSource', 'A Photon controller disk.', {
    pdID: p(1, s('ID of the disk.')), fsType: fsType(2),
  }, ['pdID']), 'Deprecated: a Photon controller disk.')),
  projected: p(26, t.ref(source('ProjectedVolumeSource', 'Several sources projected into one directory.', {
    sources: p(1, t.array(t.ref(define(core('VolumeProjection'), t.object({
      secret: p(1, t.ref(define(core('SecretProjection'), t.object({
        ...referenceName, items: items(2), optional: optional(4, 'secret or its keys'),
      }, 'A Secret\'s keys in a projected volume.', embedsReference)), 'A Secret\'s keys.')),
      downwardAPI: p(2, t.ref(define(core('DownwardAPIProjection'), t.object({ items: downwardItems(1) }, 'Fields of the pod in a projected volume.')), 'Fields of the pod.')),
      configMap: p(3, t.ref(define(core('ConfigMapProjection'), t.object({
        ...referenceName, items: items(2), optional: optional(4, 'ConfigMap or its keys'),
      }, 'A ConfigMap\'s keys in a projected volume.', embedsReference)), 'A ConfigMap\'s keys.')),
      serviceAccountToken: p(4, t.ref(define(core('ServiceAccountTokenProjection'), t.object({
        audience: p(1, s('Audience the token is meant for; the API server when unset.')),
        expirationSeconds: p(2, t.int64('Requested lifetime of the token; 1 hour when unset, at least 10 minutes.')),
        path: p(3, s('Relative path of the token file.')),
      }, 'A service account token in a projected volume.', { required: ['path'] })), 'A service account token.')),
      clusterTrustBundle: p(5, t.ref(define(core('ClusterTrustBundleProjection'), t.object({
        name: p(1, s('Name of one ClusterTrustBundle.')), signerName: p(2, s('Signer whose bundles are selected.')),
        labelSelector: p(3, t.ref(LabelSelector, 'Selects bundles of the signer.')), optional: p(5, t.bool('Whether missing bundles are tolerated.')),
        path: p(4, s('Relative path of the file.')),
      }, 'ClusterTrustBundles as a file.', { required: ['path'] })), 'Certificates of ClusterTrustBundles.')),
    }, 'One source of a projected volume.'))), 'The sources to project.', { listType: 'atomic' })),
    defaultMode: defaultMode(2),
  }), 'Secrets, ConfigMaps, fields of the pod and tokens in one directory.')),
  portworxVolume: p(24, t.ref(source('PortworxVolumeSource', 'A Portworx volume.', {
    volumeID: p(1, s('ID of the volume.')), fsType: fsType(2), readOnly: readOnly(3),
  }, ['volumeID']), 'Deprecated: a Portworx volume.')),
  scaleIO: p(25, t.ref(source('ScaleIOVolumeSource', 'A ScaleIO volume.', {
    gateway: p(1, s('Gateway host.')), system: p(2, s('Storage system name.')), secretRef: secretRef(3), sslEnabled: p(4, t.bool('Whether SSL is used.')),
    protectionDomain: p(5, s('Protection domain.')), storagePool: p(6, s('Storage pool.')), storageMode: p(7, s('ThickProvisioned or ThinProvisioned; ThinProvisioned when unset.', { default: 'ThinProvisioned' })),
    volumeName: p(8, s('Name of the volume.')), fsType: p(9, s('Filesystem type to mount; xfs when unset.', { default: 'xfs' })), readOnly: readOnly(10),
  }, ['gateway', 'system', 'secretRef']), 'Deprecated: a ScaleIO volume.')),
  storageos: p(27, t.ref(source('StorageOSVolumeSource', 'A StorageOS volume.', {
    volumeName: p(1, s('Name of the volume.')), volumeNamespace: p(2, s('StorageOS namespace.')), fsType: fsType(3), readOnly: readOnly(4), secretRef: secretRef(5),
  }), 'Deprecated: a StorageOS volume.')),
  csi: p(28, t.ref(source('CSIVolumeSource', 'An ephemeral volume of a CSI driver.', {
    driver: p(1, s('Name of the CSI driver.')), readOnly: p(2, t.bool('Read-only configuration.')), fsType: p(3, s('Filesystem type to mount.')),
    volumeAttributes: p(4, t.map(s(), 'Driver-specific properties.')), nodePublishSecretRef: p(5, t.ref(LocalObjectReference, 'Secret for NodePublishVolume.')),
  }, ['driver']), 'An ephemeral volume of a CSI driver.')),
  ephemeral: p(29, t.ref(source('EphemeralVolumeSource', 'A volume claimed for the pod alone.', {
    volumeClaimTemplate: p(1, t.ref(define(core('PersistentVolumeClaimTemplate'), t.object({
      metadata: p(1, t.ref(ObjectMeta, 'Labels and annotations copied to the claim.'), 'always'),
      spec: p(2, t.ref(PersistentVolumeClaimSpec, 'The claim\'s spec.'), 'always'),
    }, 'A template of a PersistentVolumeClaim.', { required: ['spec'] })), 'Template of the claim made for the pod.')),
  }), 'A volume made for the pod by a claim from a template, deleted with it.')),
  image: p(30, t.ref(source('ImageVolumeSource', 'An OCI image or artifact.', {
    reference: p(1, s('Image or artifact reference.')), pullPolicy: p(2, s('Always, Never or IfNotPresent.', { enum: ['Always', 'IfNotPresent', 'Never'] })),
  }), 'An OCI object (image or artifact) as a read-only volume.')),
}, 'Where a volume comes from; exactly one source.'));

export const Volume = define(core('Volume'), t.object({
  name: p(1, s('Name of the volume: a DNS label, unique within the pod.')),
  ...VolumeSource.properties,
}, 'A named volume the pod\'s containers can mount.', { required: ['name'], protoInline: [{ proto: 2, schema: VolumeSource }] }));
