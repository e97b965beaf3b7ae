// Server-side apply and managed fields: the public face of this folder.

export { FieldSet } from './fieldset.js';
export { toFieldsV1, fromFieldsV1 } from './fieldsv1.js';
export {
  fieldPE, keyPE, parsePE, serializePE, pathString, peString, type Path, type PathElement,
} from './pathelement.js';
export {
  toFieldSet, ensureNamedFieldsAreMembers, reconcileWithSchema, removeItems, type ValidationError,
} from './typed.js';
export { mergeValues, compareValues, type Comparison } from './merge.js';
export {
  decodeManagedFields, encodeManagedFields, isResetManagedFields, managerIdentifier, printManager,
  validateManagedFields, type ManagedFieldsEntry, type ManagedFieldsOperation,
} from './entries.js';
export { conflictError } from './conflicts.js';
export { metadataJson } from './encode.js';
export { lastAppliedAnnotation } from './lastapplied.js';
export {
  applyObject, updateManagedFields, fieldPaths,
  type ApplyOptions, type ApplyResult, type FieldManagerOptions, type FieldManagerResult, type UpdateOptions,
} from './fieldmanager.js';
export type { VersionConverter } from './updater.js';
export { managerFromUserAgent, managerOrUserAgent, validateFieldManager, fieldManagerMaxLength } from './useragent.js';
export { untyped, type TypeInfo, type TypeKind } from '../patch/typeinfo.js';
