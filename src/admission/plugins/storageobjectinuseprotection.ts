// StorageObjectInUseProtection: every new PersistentVolumeClaim and
// PersistentVolume carries its protection finalizer, so that deleting one
// waits until the protection controllers see no pod using the claim and no
// claim bound to the volume (src/controllers/storageprotection.ts).

import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { vocabulary } from '../../machinery/vocabulary.js';

export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = 'StorageObjectInUseProtection';

  mutate(r: AdmissionRequest): void {
    if (r.operation !== 'CREATE' || r.subresource || r.kind.group !== '' || !r.object) return;
    const finalizer = r.kind.kind === 'PersistentVolumeClaim' ? vocabulary.pvcProtectionFinalizer
      : r.kind.kind === 'PersistentVolume' ? vocabulary.pvProtectionFinalizer : undefined;
    if (!finalizer) return;
    const meta = (r.object.metadata ??= {});
    const finalizers: string[] = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    if (!finalizers.includes(finalizer)) meta.finalizers = [...finalizers, finalizer];
  }
}
