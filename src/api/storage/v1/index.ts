// The storage group, version v1: every kind it stores.
import type { KindDefinition } from '../../kind.js';
import { storageClasses } from './storageclass.js';
import { csiDrivers, csiNodes, csiStorageCapacities, volumeAttachments } from './csi.js';

export const storageV1Kinds: KindDefinition[] = [storageClasses, csiDrivers, csiNodes, volumeAttachments, csiStorageCapacities];
export { storageClasses, csiDrivers, csiNodes, volumeAttachments, csiStorageCapacities };
