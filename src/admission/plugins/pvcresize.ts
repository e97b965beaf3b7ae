// PersistentVolumeClaimResize: a claim's storage request may grow only once
// it is bound, and only when its StorageClass (the same before and after)
// sets `allowVolumeExpansion: true`. Shrinking and other updates pass here
// (validation judges them). Classes come from the informer's cache.

import { parseQuantity } from '../../machinery/quantity.js';
import type { KubeObject } from '../../api/kind.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { betaStorageClassAnnotation } from './defaultclass.js';

type Obj = Record<string, any>;

function storageNanos(claim: KubeObject | undefined): bigint {
  const text = claim?.spec?.resources?.requests?.storage;
  if (typeof text !== 'string' && typeof text !== 'number') return 0n;
  try {
    return parseQuantity(String(text)).nanos;
  } catch {
    return 0n;
  }
}

/** The claim's class: the old annotation wins, as upstream reads it. */
function claimClass(claim: KubeObject): string {
  const annotation = (claim.metadata?.annotations as Obj | undefined)?.[betaStorageClassAnnotation];
  return typeof annotation === 'string' ? annotation : (claim.spec?.storageClassName ?? '');
}

export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = 'PersistentVolumeClaimResize';

  constructor(private readonly classes: Lister) {}

  validate(r: AdmissionRequest): void {
    if (r.operation !== 'UPDATE' || r.subresource || r.kind.group !== '' || r.kind.kind !== 'PersistentVolumeClaim') return;
    if (!r.object || !r.oldObject) return;
    if (storageNanos(r.object) <= storageNanos(r.oldObject)) return;
    if (r.oldObject.status?.phase !== 'Bound') throw forbiddenRequest(r, 'Only bound persistent volume claims can be expanded');
    if (!this.allowsResize(r.object, r.oldObject)) {
      throw forbiddenRequest(r, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    }
  }

  private allowsResize(claim: KubeObject, old: KubeObject): boolean {
    const name = claimClass(claim);
    if (name === '' || name !== claimClass(old)) return false;
    return this.classes.get(undefined, name)?.allowVolumeExpansion === true;
  }
}
