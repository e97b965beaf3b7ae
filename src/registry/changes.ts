// Every write to an object that may exist is a change: a function from the
// stored object to the new one (upstream's UpdatedObjectInfo), which the
// store's one road runs in its update loop, again on the fresh object when
// another writer got in first. The roads differ only here: a PUT replaces
// the object, a patch patches it, an apply merges by field ownership, a view
// (scale) or a controller computes it. Creating when nothing is stored, the
// pinned resourceVersion, the field manager, admission, preparation and the
// commit are the road's, the same for all.

import { errors } from '../machinery/errors.js';
import { clone } from '../machinery/patch/json.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { VersionCodec } from '../api/codec.js';
import { decodeForWrite, decodeSent, type DecodeOptions } from '../api/decode.js';
import { applyPatch, patchPrecondition } from './patch.js';
import { trackApply } from './managed.js';
import type { ServerOwnedFields } from './serverfields.js';
import type { SentPatch } from './writeoptions.js';

/** What a change makes of the stored object. */
export interface Changed {
  object: KubeObject;
  /** Its managed fields are worked out already (an apply's). */
  tracked: boolean;
  /** The resourceVersion the client made its write conditional on, if any: the stored one must be it. */
  pinned?: string;
}

export interface Change {
  /** Whether the write creates the object when none is stored (else: NotFound). */
  creates: boolean;
  /** The new object from the stored one, which it must not change (undefined only when `creates`). */
  make(live: KubeObject | undefined): Promise<Changed>;
}

/** Loads what the kind's validation needs for a body sent (CEL, RE2: Strategy.load), before it is decoded and checked. */
export function loadForWrite(kind: KindDefinition, value: unknown): Promise<void> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? kind.strategy.load?.(value as KubeObject) : undefined;
}

/**
 * A body to write, at the version `codec` serves (the stored one without):
 * decoded there, converted to the stored version, defaulted. A version a
 * webhook converts has its conversion made ahead, one review per write.
 */
export async function decodeToStored(kind: KindDefinition, value: unknown, decode: DecodeOptions, codec?: VersionCodec): Promise<KubeObject> {
  const loading = loadForWrite(kind, value);
  if (loading) await loading;
  if (codec?.convertsLater) await codec.aheadToStored(decodeSent(kind, value, { ...decode, warnings: [] }, codec));
  return decodeForWrite(kind, value, decode, codec);
}

/**
 * PUT: the decoded object replaces the stored one. When none is stored it
 * is created, if the kind allows that (as upstream; not through a
 * sub-resource, nor when the client pinned a version other than 0).
 */
export function replacement(kind: KindDefinition, sent: KubeObject, pinned: number | undefined, subresource: string | undefined): Change {
  return {
    creates: kind.createOnUpdate && subresource === undefined && !pinned,
    make: async () => ({ object: clone(sent), tracked: false, ...(pinned !== undefined ? { pinned: String(pinned) } : {}) }),
  };
}

/** A JSON, merge or strategic patch of the stored object, made at the version `codec` serves, then decoded as a body. */
export function patched(kind: KindDefinition, patch: SentPatch & { type: Exclude<SentPatch['type'], 'apply'> }, decode: DecodeOptions, codec?: VersionCodec): Change {
  return {
    creates: false,
    make: async (live) => {
      const base = codec ? (await codec.fromStoredAll([live!]))[0]! : clone(live!);
      const result = applyPatch(patch.type, codec?.served ?? kind, base, patch.value);
      const pinned = patchPrecondition(patch.type, patch.value, live!, result);
      return { object: await decodeToStored(kind, result, decode, codec), tracked: false, ...(pinned !== undefined ? { pinned } : {}) };
    },
  };
}

/** How an apply merges: its manager, whether it forces, where it lands, the group name the client used. */
export interface Applier {
  manager: string;
  force: boolean;
  subresource?: string;
  codec?: VersionCodec;
  clientGroup?: string;
}

/** Server-side apply of `config` (see applyConfig): merged by field ownership, or the object created (not through a sub-resource). */
export function applied(kind: KindDefinition, config: KubeObject, by: Applier): Change {
  const pinned = config.metadata?.resourceVersion;
  return {
    creates: by.subresource === undefined,
    make: async (live) => ({
      object: await trackApply(kind, live, config, by.manager, by.force, by.subresource, by.codec, by.clientGroup),
      tracked: true,
      ...(pinned ? { pinned } : {}),
    }),
  };
}

/** A change computed from a copy of the stored object (a controller's, a view's write). */
export function computed(compute: (live: KubeObject) => KubeObject | Promise<KubeObject>, pinned?: string): Change {
  return { creates: false, make: async (live) => ({ object: await compute(clone(live!)), tracked: false, ...(pinned ? { pinned } : {}) }) };
}

/** An apply configuration in the version it was sent in: its apiVersion and kind, its name, pruned per fieldValidation; no defaults. */
export function applyConfig(kind: KindDefinition, owned: ServerOwnedFields, value: unknown, name: string, namespace: string | undefined,
  decode: DecodeOptions, codec?: VersionCodec): KubeObject {
  const raw = value as KubeObject;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.badRequest('the applied configuration must be an object');
  if (!raw.apiVersion || !raw.kind) {
    throw errors.badRequest(`${!raw.apiVersion ? 'apiVersion' : 'kind'} must be set in an applied configuration`);
  }
  if (Array.isArray(raw.metadata?.managedFields)) throw errors.badRequest('metadata.managedFields must be nil');
  const config = decodeSent(kind, raw, decode, codec);
  owned.placeAtName(config, name, true);
  owned.placeInNamespace(config, namespace);
  return config;
}
