// The sources of a PersistentVolume (upstream 1.32's PersistentVolumeSource,
// inlined in PersistentVolumeSpec at its field numbers): the volume sources
// a pod can name too (volumes.ts), and the PV-only shapes, which name their
// secrets in any namespace. Exactly one is set, with upstream's messages.

import { define, p, t, type Schema } from '../../schema.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { core, ObjectReference } from './common.js';
import { VolumeSource } from './volumes.js';

const s = t.string;
type Obj = Record<string, any>;

/** A volume source's schema (volumes.ts) at the field number PersistentVolumeSource gives it. */
const sourceAt = (name: string, number: number): Schema => p(number, { ...VolumeSource.properties![name]!, proto: undefined });
const readOnly = (n: number) => p(n, t.bool('Mounts the volume read-only.'));
const fsType = (n: number) => p(n, s('Filesystem type to mount (ext4, xfs, ntfs).'));
const pvSource = (number: number, name: string, description: string, fields: Record<string, Schema>, required?: string[]) =>
  p(number, t.ref(define(core(name), t.object(fields, description, required ? { required } : {})), description));

export const SecretReference = define(core('SecretReference'), t.object({
  name: p(1, s('Name of the secret.')), namespace: p(2, s('Namespace of the secret.')),
}, 'Names a secret in any namespace.', { mapType: 'atomic' }));
const secretRef = (n: number) => p(n, t.ref(SecretReference, 'Secret holding credentials.'));

export const persistentSources = {
  gcePersistentDisk: sourceAt('gcePersistentDisk', 1),
  awsElasticBlockStore: sourceAt('awsElasticBlockStore', 2),
  hostPath: sourceAt('hostPath', 3),
  glusterfs: pvSource(4, 'GlusterfsPersistentVolumeSource', 'A Glusterfs mount (deprecated).', {
    endpoints: p(1, s('Name of the Endpoints object of the Glusterfs cluster.')), path: p(2, s('Glusterfs volume path.')), readOnly: readOnly(3),
    endpointsNamespace: p(4, s('Namespace of the Endpoints; the claim\'s when unset.')),
  }, ['endpoints', 'path']),
  nfs: sourceAt('nfs', 5),
  rbd: pvSource(6, 'RBDPersistentVolumeSource', 'A Rados Block Device (deprecated).', {
    monitors: p(1, t.array(s(), 'Ceph monitors.', { listType: 'atomic' })), image: p(2, s('Rados image name.')), fsType: fsType(3),
    pool: p(4, s('Rados pool; rbd when unset.', { default: 'rbd' })), user: p(5, s('Rados user; admin when unset.', { default: 'admin' })),
    keyring: p(6, s('Keyring path; /etc/ceph/keyring when unset.', { default: '/etc/ceph/keyring' })),
    secretRef: secretRef(7), readOnly: readOnly(8),
  }, ['monitors', 'image']),
  iscsi: pvSource(7, 'ISCSIPersistentVolumeSource', 'An iSCSI disk.', {
    targetPortal: p(1, s('Target portal, IP or ip_addr:port.')), iqn: p(2, s('Target iSCSI Qualified Name.')), lun: p(3, t.int32('Target LUN number.')),
    iscsiInterface: p(4, s('Interface name; default (tcp) when unset.', { default: 'default' })), fsType: fsType(5), readOnly: readOnly(6),
    portals: p(7, t.array(s(), 'More target portals.', { listType: 'atomic' })),
    chapAuthDiscovery: p(8, t.bool('iSCSI discovery CHAP authentication.')), chapAuthSession: p(11, t.bool('iSCSI session CHAP authentication.')),
    secretRef: secretRef(10), initiatorName: p(12, s('Custom iSCSI initiator name.')),
  }, ['targetPortal', 'iqn', 'lun']),
  cinder: pvSource(8, 'CinderPersistentVolumeSource', 'An OpenStack Cinder volume (deprecated).', {
    volumeID: p(1, s('ID of the volume.')), fsType: fsType(2), readOnly: readOnly(3), secretRef: secretRef(4),
  }, ['volumeID']),
  cephfs: pvSource(9, 'CephFSPersistentVolumeSource', 'A Ceph filesystem mount (deprecated).', {
    monitors: p(1, t.array(s(), 'Ceph monitors.', { listType: 'atomic' })), path: p(2, s('Root of the mount; / when unset.')),
    user: p(3, s('Rados user; admin when unset.')), secretFile: p(4, s('Keyring path; /etc/ceph/user.secret when unset.')),
    secretRef: secretRef(5), readOnly: readOnly(6),
  }, ['monitors']),
  fc: sourceAt('fc', 10),
  flocker: sourceAt('flocker', 11),
  flexVolume: pvSource(12, 'FlexPersistentVolumeSource', 'A volume of an exec-based plugin.', {
    driver: p(1, s('Name of the driver.')), fsType: fsType(2), secretRef: secretRef(3), readOnly: readOnly(4),
    options: p(5, t.map(s(), 'Extra command options.')),
  }, ['driver']),
  azureFile: pvSource(13, 'AzureFilePersistentVolumeSource', 'An Azure File Service mount (deprecated).', {
    secretName: p(1, s('Secret holding the account name and key.')), shareName: p(2, s('Share name.')), readOnly: readOnly(3),
    secretNamespace: p(4, s('Namespace of the secret; the pod\'s when unset.')),
  }, ['secretName', 'shareName']),
  vsphereVolume: sourceAt('vsphereVolume', 14),
  quobyte: sourceAt('quobyte', 15),
  azureDisk: sourceAt('azureDisk', 16),
  photonPersistentDisk: sourceAt('photonPersistentDisk', 17),
  portworxVolume: sourceAt('portworxVolume', 18),
  scaleIO: pvSource(19, 'ScaleIOPersistentVolumeSource', 'A ScaleIO volume (deprecated).', {
    gateway: p(1, s('Host address of the ScaleIO API gateway.')), system: p(2, s('Name of the storage system.')), secretRef: secretRef(3),
    sslEnabled: p(4, t.bool('Whether the gateway is reached over SSL.')), protectionDomain: p(5, s('Protection domain.')),
    storagePool: p(6, s('Storage pool.')), storageMode: p(7, s('ThickProvisioned or ThinProvisioned; ThinProvisioned when unset.', { default: 'ThinProvisioned' })),
    volumeName: p(8, s('Name of an existing volume.')), fsType: p(9, s('Filesystem type to mount; xfs when unset.', { default: 'xfs' })), readOnly: readOnly(10),
  }, ['gateway', 'system', 'secretRef']),
  local: pvSource(20, 'LocalVolumeSource', 'A local disk, directory or partition of a node.', {
    path: p(1, s('Full path of the volume on the node.')), fsType: p(2, s('Filesystem type, for block devices.')),
  }, ['path']),
  storageos: pvSource(21, 'StorageOSPersistentVolumeSource', 'A StorageOS volume (deprecated).', {
    volumeName: p(1, s('Name of the volume in its namespace.')), volumeNamespace: p(2, s('StorageOS namespace.')), fsType: fsType(3), readOnly: readOnly(4),
    secretRef: p(5, t.ref(ObjectReference, 'Secret holding the API credentials.')),
  }),
  csi: pvSource(22, 'CSIPersistentVolumeSource', 'A volume of a CSI driver.', {
    driver: p(1, s('Name of the CSI driver.')), volumeHandle: p(2, s('ID of the volume at the driver.')), readOnly: p(3, t.bool('Read-only.')),
    fsType: p(4, s('Filesystem type.')), volumeAttributes: p(5, t.map(s(), 'Driver-specific attributes.')),
    controllerPublishSecretRef: p(6, t.ref(SecretReference, 'Secret for ControllerPublishVolume.')),
    nodeStageSecretRef: p(7, t.ref(SecretReference, 'Secret for NodeStageVolume.')),
    nodePublishSecretRef: p(8, t.ref(SecretReference, 'Secret for NodePublishVolume.')),
    controllerExpandSecretRef: p(9, t.ref(SecretReference, 'Secret for ControllerExpandVolume.')),
    nodeExpandSecretRef: p(10, t.ref(SecretReference, 'Secret for NodeExpandVolume.')),
  }, ['driver', 'volumeHandle']),
};

export const PersistentVolumeSource = define(core('PersistentVolumeSource'), t.object(persistentSources, 'Where a persistent volume is; exactly one source.'));

const hostPathTypes = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
const hasBacksteps = (path: string) => path.split(/[\\/]/).includes('..');
const required = (source: Obj, at: string, ...fields: string[]) => fields.filter((f) => !source[f]).map((f) => fieldErrors.required(`${at}.${f}`));

/** Upstream's checks of the one source a PV spec sets (`spec`), beside the choice of exactly one. */
export function validatePersistentSource(spec: Obj): FieldError[] {
  const sources = Object.keys(persistentSources).filter((k) => spec[k] !== undefined && spec[k] !== null);
  if (!sources.length) return [fieldErrors.required('spec', 'must specify a volume type')];
  const errs = sources.slice(1).map((extra) => fieldErrors.forbidden(`spec.${extra}`, 'may not specify more than 1 volume type'));
  const name = sources[0]!;
  const source: Obj = spec[name] ?? {};
  const at = `spec.${name}`;
  switch (name) {
    case 'hostPath':
      errs.push(...required(source, at, 'path'));
      if (typeof source.path === 'string' && hasBacksteps(source.path)) errs.push(fieldErrors.invalid(`${at}.path`, source.path, "must not contain '..'"));
      if (source.type !== undefined && !hostPathTypes.includes(source.type)) errs.push(fieldErrors.notSupported(`${at}.type`, source.type, hostPathTypes));
      break;
    case 'local':
      errs.push(...required(source, at, 'path'));
      if (typeof source.path === 'string' && hasBacksteps(source.path)) errs.push(fieldErrors.invalid(`${at}.path`, source.path, "must not contain '..'"));
      if (!spec.nodeAffinity) errs.push(fieldErrors.required('spec.nodeAffinity', 'Local volume requires node affinity'));
      break;
    case 'nfs':
      errs.push(...required(source, at, 'server', 'path'));
      if (source.path && !String(source.path).startsWith('/')) errs.push(fieldErrors.invalid(`${at}.path`, source.path, 'must be an absolute path'));
      break;
    case 'iscsi':
      errs.push(...required(source, at, 'targetPortal', 'iqn'));
      if (typeof source.lun === 'number' && (source.lun < 0 || source.lun > 255)) errs.push(fieldErrors.invalid(`${at}.lun`, source.lun, 'must be between 0 and 255, inclusive'));
      break;
    case 'csi':
      errs.push(...required(source, at, 'driver', 'volumeHandle'));
      break;
    case 'glusterfs': errs.push(...required(source, at, 'endpoints', 'path')); break;
    case 'rbd':
      if (!(source.monitors ?? []).length) errs.push(fieldErrors.required(`${at}.monitors`));
      errs.push(...required(source, at, 'image'));
      break;
    case 'cephfs': if (!(source.monitors ?? []).length) errs.push(fieldErrors.required(`${at}.monitors`)); break;
    case 'cinder': errs.push(...required(source, at, 'volumeID')); break;
    case 'flexVolume': errs.push(...required(source, at, 'driver')); break;
    case 'azureFile': errs.push(...required(source, at, 'secretName', 'shareName')); break;
    case 'scaleIO': errs.push(...required(source, at, 'gateway', 'system', 'secretRef')); break;
  }
  return errs;
}
