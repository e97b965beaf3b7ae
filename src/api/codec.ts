// Between a served version of a kind and its stored version (the hub). Every
// road that takes or gives objects at a version other than the stored one
// goes through one of these: the REST objects of that version, the watch
// encoder, admission reviews. The stored version needs none: its objects
// travel as stored.
//
// The declared conversion functions get a copy of their own (objects read
// from the cache are shared and frozen) and their answer is labelled with
// the target version, so a declaration only moves fields.

import { errors, type FieldError } from '../machinery/errors.js';
import { apiVersionOf, kindAt, type KindDefinition, type KindVersion, type KubeObject } from './kind.js';

/** Writes converted ahead (by a conversion webhook) a codec keeps at most, oldest dropped first. */
const maxConvertedAhead = 10_000;

export class VersionCodec {
  /** The kind as clients see it at this version. */
  readonly served: KindDefinition;
  /** `group/version` of the served version. */
  readonly apiVersion: string;
  private readonly storedApiVersion: string;
  private readonly version: KindVersion & Required<Pick<KindVersion, 'toStored' | 'fromStored'>>;

  constructor(readonly stored: KindDefinition, version: KindVersion) {
    if (!version.toStored || !version.fromStored || !stored.versions.includes(version)) {
      throw new Error(`kind ${stored.kind}: ${apiVersionOf({ group: version.group, version: version.name })} is not one of its versions with conversions`);
    }
    this.version = version as VersionCodec['version'];
    this.served = kindAt(stored, version);
    this.apiVersion = apiVersionOf(this.served);
    this.storedApiVersion = apiVersionOf(stored);
  }

  /** Writes converted ahead by `convertsLater`, by JSON text, with how many writes wait for each. */
  private readonly convertedAhead = new Map<string, { object: KubeObject; waiting: number }>();

  /** Whether this version's conversions answer later (a webhook): reads use `fromStoredAll`, writes `aheadToStored`. */
  get convertsLater(): boolean {
    return this.version.convertsLater !== undefined;
  }

  /**
   * Stored objects in the served version's shape: at once, or in one call of
   * the later conversion (one ConversionReview per list, watch event or
   * answer). Throws the converter's ApiError.
   */
  async fromStoredAll(objects: KubeObject[]): Promise<KubeObject[]> {
    const later = this.version.convertsLater;
    if (!later) return objects.map((o) => this.fromStored(o));
    if (!objects.length) return [];
    const converted = await later.convert(objects, this.apiVersion);
    return converted.map((o) => labelled(o, this.apiVersion, this.stored.kind));
  }

  /**
   * Converts a write's decoded body ahead (one review per write), so that the
   * synchronous `toStored` of the write path finds it. Nothing for a version
   * that converts at once.
   */
  async aheadToStored(obj: KubeObject): Promise<void> {
    const later = this.version.convertsLater;
    if (!later) return;
    const [converted] = await later.convert([obj], this.storedApiVersion);
    const key = JSON.stringify(obj);
    const entry = this.convertedAhead.get(key);
    if (entry) entry.waiting++;
    else {
      if (this.convertedAhead.size >= maxConvertedAhead) this.convertedAhead.delete(this.convertedAhead.keys().next().value!);
      this.convertedAhead.set(key, { object: converted!, waiting: 1 });
    }
  }

  /**
   * A write's object of the served version in the stored shape: for a
   * version converted later, the conversion made ahead (`aheadToStored`).
   */
  toStoredForWrite(obj: KubeObject): KubeObject {
    if (!this.version.convertsLater) return this.toStored(obj);
    const key = JSON.stringify(obj);
    const entry = this.convertedAhead.get(key);
    // A write that was not converted ahead is refused, never stored in the wrong shape.
    if (!entry) throw errors.internal(`conversion webhook for ${this.apiVersion}, Kind=${this.stored.kind} failed: the object was not converted ahead of its write`);
    if (--entry.waiting === 0) this.convertedAhead.delete(key);
    return labelled(structuredClone(entry.object), this.storedApiVersion, this.stored.kind);
  }

  /**
   * An object of the served version in the stored shape. For a version
   * converted later this is the declared fallback (relabelled), used only
   * for bookkeeping (managed fields); writes use `toStoredForWrite`.
   */
  toStored(obj: KubeObject): KubeObject {
    return labelled(this.version.toStored(structuredClone(obj)), this.storedApiVersion, this.stored.kind);
  }

  /** Errors of the rules of writes through this version, for an object in its shape. */
  validate(obj: KubeObject): FieldError[] {
    return this.version.validate?.(obj) ?? [];
  }

  /**
   * A stored object in the served version's shape. For a version converted
   * later this is the declared fallback (relabelled), used only for
   * bookkeeping (managed fields, field selectors, admission reviews); what
   * clients read goes through `fromStoredAll`.
   */
  fromStored(obj: KubeObject): KubeObject {
    return labelled(this.version.fromStored(structuredClone(obj)), this.apiVersion, this.stored.kind);
  }

  /** A list of stored objects (or a list answer) in the served version. */
  fromStoredList(list: KubeObject): KubeObject {
    return { ...list, apiVersion: this.apiVersion, items: (list.items as KubeObject[]).map((item) => this.fromStored(item)) };
  }
}

function labelled(obj: KubeObject, apiVersion: string, kind: string): KubeObject {
  // apiVersion and kind lead, as stored objects do.
  const { apiVersion: _v, kind: _k, ...rest } = obj;
  return { apiVersion, kind, ...rest };
}

/** Memo of codecsOf: the codecs of a kind never change. */
const codecs = new WeakMap<KindDefinition, VersionCodec[]>();

/** A codec for every served version of a stored kind but the stored one. */
export function codecsOf(stored: KindDefinition): VersionCodec[] {
  let list = codecs.get(stored);
  if (!list) {
    list = stored.versions.filter((v) => v.served && kindAt(stored, v) !== stored).map((v) => new VersionCodec(stored, v));
    codecs.set(stored, list);
  }
  return list;
}

/** The codec of `group`/`version` of a stored kind, or undefined for the stored version (or one it does not serve). */
export function codecFor(stored: KindDefinition, group: string, version: string): VersionCodec | undefined {
  return codecsOf(stored).find((c) => c.served.group === group && c.served.version === version);
}

/**
 * One of our versions under upstream's name for its group
 * (`rbac.authorization.k8s.io/v1` for ours): a typed upstream client sends
 * bodies and reads answers only in the name it knows. Nothing converts;
 * only the label differs, so bodies are taken as ours and answers relabelled.
 */
export class UpstreamName {
  /** `theirs`: the apiVersion the client speaks; `ours`: the same version by our name. */
  constructor(readonly theirs: string, readonly ours: string) {}

  /** A body in the client's name taken as ours (anything else is left for decoding to judge). */
  bodyAsOurs(body: unknown): unknown {
    if (typeof body === 'object' && body !== null && (body as KubeObject).apiVersion === this.theirs) return { ...(body as KubeObject), apiVersion: this.ours };
    return body;
  }

  /** An answer in our version, relabelled in the client's (shared objects are copied, never changed). */
  answerAsTheirs(obj: KubeObject): KubeObject {
    if (obj.apiVersion !== this.ours) return obj;
    const out: KubeObject = { ...obj, apiVersion: this.theirs };
    if (Array.isArray(obj.items)) out.items = obj.items.map((i: KubeObject) => this.answerAsTheirs(i));
    return out;
  }
}
