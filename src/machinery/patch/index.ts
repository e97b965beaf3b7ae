// The three patch forms the server applies, and the TypeInfo they read.

export { applyJsonPatch, decodeJsonPatch, jsonPatch, maxJsonPatchOperations, type JsonPatchOperation } from './jsonpatch.js';
export { applyMergePatch } from './mergepatch.js';
export { applyStrategicMergePatch } from './strategic.js';
export {
  untyped, childOf, itemsOf, isNamedField, listSemantics, isAtomicMap, patchStrategies,
  type TypeInfo, type TypeKind, type ListSemantics,
} from './typeinfo.js';
export { patchRejected } from './errors.js';
