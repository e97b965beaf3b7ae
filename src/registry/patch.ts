// Applying a client's patch to the live object: JSON patch (RFC 6902), JSON
// merge patch (RFC 7386) and strategic merge patch, driven by the kind's
// schema. Server-side apply is the fourth type; it merges by field ownership
// (see managed.ts) rather than here.

import { errors } from '../machinery/errors.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, decodeJsonPatch } from '../machinery/patch/index.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import { typeInfoOf } from '../api/typeinfo.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** Applies a non-apply patch to a copy of `live`. */
export function applyPatch(type: Exclude<PatchType, 'apply'>, kind: KindDefinition, live: KubeObject, patch: unknown): KubeObject {
  let patched: unknown;
  switch (type) {
    case 'json':
      patched = applyJsonPatch(live, decodeJsonPatch(patch));
      break;
    case 'merge':
      patched = applyMergePatch(live, patch);
      break;
    case 'strategic':
      if (!kind.strategicMerge) {
        throw errors.unsupportedMediaType('application/strategic-merge-patch+json', ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
      }
      patched = applyStrategicMergePatch(live, patch, typeInfoOf(kind.schema));
      break;
  }
  if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
    throw errors.badRequest('the patch must leave an object');
  }
  return patched as KubeObject;
}

/**
 * The resourceVersion the client made its patch conditional on, if any: a
 * merge-style patch that names one, or a JSON patch that changed it.
 */
export function patchPrecondition(type: PatchType, patch: unknown, live: KubeObject, patched: KubeObject): string | undefined {
  if (type === 'json') {
    const rv = patched.metadata?.resourceVersion;
    return rv !== live.metadata?.resourceVersion ? rv ?? '' : undefined;
  }
  const rv = (patch as KubeObject | undefined)?.metadata?.resourceVersion;
  return rv === undefined || rv === null ? undefined : String(rv);
}
