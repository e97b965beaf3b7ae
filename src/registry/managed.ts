// metadata.managedFields on every write: a non-apply write makes its manager
// own what it changed; an apply merges by ownership and may conflict. The
// entries that result are validated as upstream validates ObjectMeta's.

import { errors } from '../machinery/errors.js';
import { applyObject, fieldPaths, updateManagedFields, validateManagedFields, type FieldSet } from '../machinery/managedfields/index.js';
import { apiVersionOf, isViewSubresource, type KindDefinition, type KubeObject } from '../api/kind.js';
import { resolve } from '../api/schema.js';
import { typeInfoOf } from '../api/typeinfo.js';

/**
 * Fields a write does not take ownership of, because it cannot change them:
 * on the main resource those its sub-resources own (status), through a
 * sub-resource every top-level field but its own (spec, for /status).
 * Worked out once per kind and sub-resource (a kind's declaration does not change).
 */
function ignoredFields(kind: KindDefinition, subresource: string | undefined): FieldSet | undefined {
  let perKind = ignoredByKind.get(kind);
  if (!perKind) ignoredByKind.set(kind, (perKind = new Map()));
  const key = subresource ?? '';
  if (!perKind.has(key)) perKind.set(key, computeIgnoredFields(kind, subresource));
  return perKind.get(key);
}

const ignoredByKind = new WeakMap<KindDefinition, Map<string, FieldSet | undefined>>();

function computeIgnoredFields(kind: KindDefinition, subresource: string | undefined): FieldSet | undefined {
  let paths: string[];
  if (subresource === undefined) {
    paths = Object.values(kind.subresources).flatMap((d) => (isViewSubresource(d) ? [] : d.owns));
  } else {
    const declaration = kind.subresources[subresource];
    if (!declaration || isViewSubresource(declaration)) return undefined;
    const ownRoots = new Set(declaration.owns.map((p) => p.split('.')[0]));
    paths = Object.keys(resolve(kind.schema).properties ?? {}).filter((f) => !ownRoots.has(f) && !['apiVersion', 'kind', 'metadata'].includes(f));
  }
  return paths.length ? fieldPaths(...paths) : undefined;
}

function baseOptions(kind: KindDefinition, subresource: string | undefined) {
  return {
    typeInfo: typeInfoOf(kind.schema),
    apiVersion: apiVersionOf(kind),
    now: new Date(),
    subresource,
    ignoredFields: ignoredFields(kind, subresource),
  };
}

/**
 * 422 for entries a client smuggled in (a manager too long or unprintable, a
 * subresource too long): the field manager keeps requested entries it can
 * read, and rewrites operation and fieldsType itself.
 */
function validated(kind: KindDefinition, obj: KubeObject): KubeObject {
  const errs = validateManagedFields(obj.metadata?.managedFields);
  if (errs.length > 0) throw errors.invalid(kind.group, kind.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errs);
  return obj;
}

/** `next` with managedFields updated for a non-apply write by `manager`. */
export function trackWrite(kind: KindDefinition, live: KubeObject | undefined, next: KubeObject, manager: string, subresource?: string): KubeObject {
  return validated(kind, updateManagedFields(live, next, { ...baseOptions(kind, subresource), manager }).object as KubeObject);
}

/** Server-side apply of `config` over `live` (undefined: create). Throws 409 on conflicts unless forced. */
export function trackApply(kind: KindDefinition, live: KubeObject | undefined, config: KubeObject, manager: string, force: boolean, subresource?: string): KubeObject {
  const meta = live?.metadata;
  const description = `${meta?.namespace ? `${meta.namespace}/` : ''}${meta?.name ?? config.metadata?.name ?? ''}; ${apiVersionOf(kind)}, Kind=${kind.kind}`;
  const applied = applyObject(live, config, { ...baseOptions(kind, subresource), manager, force, objectDescription: description }).object as KubeObject;
  return validated(kind, applied);
}
