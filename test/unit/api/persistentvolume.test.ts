// PersistentVolume sources without a server: every source of upstream 1.32's
// PersistentVolumeSource is declared at its field number, exactly one must be
// set, and each is checked with upstream's messages (table-driven).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { persistentVolumes } from '../../../src/api/core/v1/storage.js';
import { decodeObject } from '../../../src/api/decode.js';

const pvWith = (source: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const pv = decodeObject(persistentVolumes, {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], ...source, ...extra },
  }, { fieldValidation: 'Strict', warnings: [] });
  persistentVolumes.strategy.defaults!(pv);
  return persistentVolumes.strategy.validate!(pv).map((e) => e.describe());
};

test('the PV-only sources have upstream\'s names and field numbers', () => {
  const spec = (persistentVolumes.schema.properties!.spec!.ref ?? persistentVolumes.schema.properties!.spec!)!;
  const inlined = spec.protoInline?.[0]?.schema.properties ?? {};
  const numbers = Object.fromEntries(Object.entries(inlined).map(([name, s]) => [name, s.proto]));
  assert.deepEqual(numbers, {
    gcePersistentDisk: 1, awsElasticBlockStore: 2, hostPath: 3, glusterfs: 4, nfs: 5, rbd: 6, iscsi: 7, cinder: 8, cephfs: 9, fc: 10,
    flocker: 11, flexVolume: 12, azureFile: 13, vsphereVolume: 14, quobyte: 15, azureDisk: 16, photonPersistentDisk: 17, portworxVolume: 18,
    scaleIO: 19, local: 20, storageos: 21, csi: 22,
  });
});

test('validation of the one source: upstream\'s messages, table-driven', () => {
  const affinity = { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] }] } } };
  const table: [string, Record<string, unknown>, string[], Record<string, unknown>?][] = [
    ['a hostPath', { hostPath: { path: '/data', type: 'DirectoryOrCreate' } }, []],
    ['no source', {}, ['spec: Required value: must specify a volume type']],
    ['two sources', { hostPath: { path: '/a' }, nfs: { server: 's', path: '/b' } }, ['spec.nfs: Forbidden: may not specify more than 1 volume type']],
    ['a hostPath type upstream does not know', { hostPath: { path: '/a', type: 'Folder' } },
      ['spec.hostPath.type: Unsupported value: "Folder": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"']],
    ['a hostPath with ..', { hostPath: { path: '/a/../b' } }, ['spec.hostPath.path: Invalid value: "/a/../b": must not contain \'..\'']],
    ['a local volume without node affinity', { local: { path: '/mnt/a' } }, ['spec.nodeAffinity: Required value: Local volume requires node affinity']],
    ['a local volume with node affinity', { local: { path: '/mnt/a' } }, [], affinity],
    ['a relative NFS path', { nfs: { server: 'nfs', path: 'exports' } }, ['spec.nfs.path: Invalid value: "exports": must be an absolute path']],
    ['an NFS source without server', { nfs: { path: '/x' } }, ['spec.nfs.server: Required value']],
    ['a CSI source without handle', { csi: { driver: 'csi.example.com' } }, ['spec.csi.volumeHandle: Required value']],
    ['an iSCSI LUN out of range', { iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2024-01.io.example:a', lun: 300 } }, ['spec.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive']],
    ['an RBD source without monitors', { rbd: { image: 'i' } }, ['spec.rbd.monitors: Required value']],
    ['an Azure file without share', { azureFile: { secretName: 's' } }, ['spec.azureFile.shareName: Required value']],
    ['a ScaleIO source without its secret', { scaleIO: { gateway: 'g', system: 's' } }, ['spec.scaleIO.secretRef: Required value']],
    ['a flex source without driver', { flexVolume: { fsType: 'ext4' } }, ['spec.flexVolume.driver: Required value']],
    ['a StorageOS source', { storageos: { volumeName: 'v' } }, []],
  ];
  for (const [what, source, expected, extra] of table) assert.deepEqual(pvWith(source, extra), expected, what);
});
