// Moving from client-side to server-side apply with kubectl: an apply by the
// manager `kubectl` may take, without force, fields the object's
// last-applied annotation set and that still hold those values; and when the
// object carries that annotation, the apply keeps it in step with what was
// applied. The annotation is kubectl's own name (client wire compatibility).

import { jsonTextExceedsDepth } from '../limits.js';
import { isObject, type JsonObject } from '../patch/json.js';
import type { TypeInfo } from '../patch/typeinfo.js';
import { FieldSet } from './fieldset.js';
import { compareValues } from './merge.js';
import { goJson } from './pathelement.js';
import { toFieldSet } from './typed.js';

export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/** The field manager kubectl uses for `apply --server-side`. */
export const kubectlServerSideManager = 'kubectl';

function annotationOf(obj: JsonObject): string | undefined {
  const meta = obj.metadata;
  if (!isObject(meta) || !isObject(meta.annotations)) return undefined;
  const v = meta.annotations[lastAppliedAnnotation];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Fields a conflict may be ignored on: set by the last client-side apply and neither changed nor dropped since. */
export function allowedConflictsFromLastApplied(live: JsonObject, apiVersion: string, t: TypeInfo): FieldSet | undefined {
  const text = annotationOf(live);
  // The annotation is a string: no depth check of the request saw the JSON inside it.
  if (text === undefined || jsonTextExceedsDepth(text)) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(last) || last.apiVersion !== apiVersion) return undefined;
  const lastSet = toFieldSet(last, t);
  const c = compareValues(last, live, t);
  return lastSet.difference(c.modified).difference(c.added).difference(c.removed);
}

/** Rewrites the annotation (when the object has one) to the applied configuration, as kubectl would write it. */
export function syncLastApplied(result: JsonObject, config: JsonObject): void {
  if (annotationOf(result) === undefined) return;
  const applied = JSON.parse(JSON.stringify(config)) as JsonObject;
  if (isObject(applied.metadata) && isObject(applied.metadata.annotations)) delete applied.metadata.annotations[lastAppliedAnnotation];
  const annotations = (result.metadata as JsonObject).annotations as JsonObject;
  annotations[lastAppliedAnnotation] = `${goJson(applied)}\n`;
  // Dropped rather than letting the annotations outgrow their limit.
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > totalAnnotationSizeLimit) delete annotations[lastAppliedAnnotation];
}

const totalAnnotationSizeLimit = 256 * 1024;
