// metadata.managedFields on every write: a non-apply write makes its manager
// own what it changed; an apply merges by ownership and may conflict. The
// entries that result are validated as upstream validates ObjectMeta's.
//
// A write is tracked in the version it was sent in, and its entry records
// that version; for a kind of several versions each other entry is read in
// its own version, against the objects converted to it, as upstream. A
// request that named the kind's group by its upstream name (a CRD applied as
// apiextensions.k8s.io/v1) is recorded, and told of conflicts, in that name.

import { errors } from '../machinery/errors.js';
import {
  applyObject, fieldPaths, updateManagedFields, validateManagedFields, type FieldSet, type TypeInfo, type VersionConverter,
} from '../machinery/managedfields/index.js';
import { apiVersionOf, isViewSubresource, type KindDefinition, type KubeObject } from '../api/kind.js';
import { codecsOf, withConversionsAhead, type VersionCodec } from '../api/codec.js';
import { asStored } from '../api/decode.js';
import { resolve } from '../api/schema.js';
import { typeInfoOf } from '../api/typeinfo.js';
import { productApiVersionForUpstream, productGroupForUpstream } from '../machinery/vocabulary.js';

/** The apiVersion of `kind` as the request named it: by the upstream name of its group when the client used that. */
function apiVersionAsNamed(kind: KindDefinition, clientGroup: string | undefined): string {
  return clientGroup !== undefined && productGroupForUpstream(clientGroup) === kind.group ? `${clientGroup}/${kind.version}` : apiVersionOf(kind);
}

/** Our name of an apiVersion an entry may record by its group's upstream name. */
const ourApiVersion = (v: string) => productApiVersionForUpstream(v) ?? v;

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

/** Conversions between the versions of a stored kind, by apiVersion; none for a kind of one version. */
function converterOf(stored: KindDefinition): VersionConverter | undefined {
  if (!converters.has(stored)) converters.set(stored, makeConverter(stored));
  return converters.get(stored);
}

const converters = new WeakMap<KindDefinition, VersionConverter | undefined>();

function makeConverter(stored: KindDefinition): VersionConverter | undefined {
  const codecs = new Map(codecsOf(stored).map((c) => [c.apiVersion, c]));
  if (codecs.size === 0) return undefined;
  const storedVersion = apiVersionOf(stored);
  const types = new Map<string, TypeInfo>([[storedVersion, typeInfoOf(stored.schema)]]);
  for (const [v, c] of codecs) types.set(v, typeInfoOf(c.served.schema));
  const known = (v: string) => types.has(v);
  return {
    convert(obj, fromAsNamed, toAsNamed) {
      const [from, to] = [ourApiVersion(fromAsNamed), ourApiVersion(toAsNamed)];
      if (!known(from) || !known(to)) return undefined;
      const hub = from === storedVersion ? obj : codecs.get(from)!.toStored(obj as KubeObject);
      return to === storedVersion ? hub : codecs.get(to)!.fromStored(hub as KubeObject);
    },
    typeInfo: (v) => types.get(ourApiVersion(v)),
  };
}

function baseOptions(stored: KindDefinition, subresource: string | undefined, codec: VersionCodec | undefined, clientGroup: string | undefined) {
  const kind = codec?.served ?? stored;
  return {
    typeInfo: typeInfoOf(kind.schema),
    apiVersion: apiVersionAsNamed(kind, clientGroup),
    now: new Date(),
    subresource,
    ignoredFields: ignoredFields(kind, subresource),
    converter: converterOf(stored),
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

/** Whether a version of the kind converts later (a conversion webhook): its managed fields are worked out on objects it converted. */
const convertsLater = (kind: KindDefinition) => codecsOf(kind).some((c) => c.convertsLater);

/**
 * `next` with managedFields updated for a non-apply write by `manager`, made
 * at the version `codec` serves (the stored one without): the change is
 * compared there, and for every other manager in its own version. `live`
 * and `next` are stored objects.
 */
export async function trackWrite(kind: KindDefinition, live: KubeObject | undefined, next: KubeObject, manager: string, subresource?: string, codec?: VersionCodec, clientGroup?: string): Promise<KubeObject> {
  if (!convertsLater(kind)) return trackWriteNow(kind, live, next, manager, subresource, codec, clientGroup);
  return withConversionsAhead(() => trackWriteNow(kind, live, next, manager, subresource, codec, clientGroup));
}

function trackWriteNow(kind: KindDefinition, live: KubeObject | undefined, next: KubeObject, manager: string, subresource?: string, codec?: VersionCodec, clientGroup?: string): KubeObject {
  const opts = { ...baseOptions(kind, subresource, codec, clientGroup), manager };
  if (!codec) return validated(kind, updateManagedFields(live, next, opts).object as KubeObject);
  const { managedFields } = updateManagedFields(live && codec.fromStored(live), codec.fromStored(next), opts);
  // The entries are the same in every version: they go on the stored object as they are.
  const meta = { ...next.metadata };
  if (managedFields.length > 0) meta.managedFields = managedFields;
  else delete meta.managedFields;
  return validated(kind, { ...next, metadata: meta });
}

/**
 * Server-side apply of `config`, sent at the version `codec` serves (the
 * stored one without), over the stored `live` (undefined: create): merged at
 * that version, answered as the stored kind. Throws 409 on conflicts unless forced.
 */
export async function trackApply(kind: KindDefinition, live: KubeObject | undefined, config: KubeObject, manager: string, force: boolean, subresource?: string, codec?: VersionCodec, clientGroup?: string): Promise<KubeObject> {
  const at = codec?.served ?? kind;
  const meta = live?.metadata;
  const description = `${meta?.namespace ? `${meta.namespace}/` : ''}${meta?.name ?? config.metadata?.name ?? ''}; ${apiVersionAsNamed(at, clientGroup)}, Kind=${at.kind}`;
  // A version converted later (a conversion webhook) converts the live object, and the result back, in a review each.
  const liveAt = live && codec ? (await codec.fromStoredAll([live]))[0] : live;
  const options = { ...baseOptions(kind, subresource, codec, clientGroup), manager, force, objectDescription: description };
  const apply = () => applyObject(liveAt, config, options).object as KubeObject;
  const applied = convertsLater(kind) ? await withConversionsAhead(apply) : apply();
  await codec?.aheadToStored(applied);
  return validated(kind, asStored(kind, applied, codec));
}
