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
import { BoundedMap } from '../machinery/boundedmap.js';
import { apiVersionOf, kindAt, type KindDefinition, type KindVersion, type KubeObject } from './kind.js';

/** Conversions (by a conversion webhook) a codec keeps per direction, oldest dropped first. */
const maxConvertedAhead = 2_000;

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

  /**
   * What the later conversion (a webhook) answered, by the JSON text of the
   * object converted: from the stored version to this one, and back. The
   * synchronous roads (managed fields, field selectors, admission reviews,
   * a write's own conversion) read here; they are converted ahead.
   */
  /** Conversions made ahead, by the JSON text of the object converted; the oldest forgotten first. */
  private readonly convertedFromStored = new BoundedMap<string, KubeObject>(maxConvertedAhead);
  private readonly convertedToStored = new BoundedMap<string, KubeObject>(maxConvertedAhead);

  /** Whether this version's conversions answer later (a webhook): reads use `fromStoredAll`, writes `aheadToStored`. */
  get convertsLater(): boolean {
    return this.version.convertsLater !== undefined;
  }

  /**
   * Stored objects in the served version's shape: at once, or in one call of
   * the later conversion (one ConversionReview per list, watch event or
   * answer; what clients read is always converted anew). Throws the
   * converter's ApiError.
   */
  async fromStoredAll(objects: KubeObject[]): Promise<KubeObject[]> {
    const later = this.version.convertsLater;
    if (!later) return objects.map((o) => this.fromStored(o));
    if (!objects.length) return [];
    const converted = (await later.convert(objects, this.apiVersion)).map((o) => labelled(o, this.apiVersion, this.stored.kind));
    objects.forEach((o, i) => this.remember(o, converted[i]!));
    return converted;
  }

  /** A stored object in the served version (converted later when the version does). */
  async fromStoredOne(obj: KubeObject): Promise<KubeObject> {
    return this.convertsLater ? (await this.fromStoredAll([obj]))[0]! : this.fromStored(obj);
  }

  /**
   * Converts stored objects ahead (one review for those not converted
   * already), so that the synchronous `fromStored` finds them. Nothing for a
   * version that converts at once.
   */
  async aheadFromStored(objects: (KubeObject | undefined)[]): Promise<void> {
    if (!this.convertsLater) return;
    const missing = [...new Map(objects.filter((o): o is KubeObject => o !== undefined)
      .map((o) => [JSON.stringify(o), o] as const)).entries()].filter(([key]) => !this.convertedFromStored.has(key)).map(([, o]) => o);
    if (missing.length) await this.fromStoredAll(missing);
  }

  /**
   * Converts a write's decoded body ahead (one review per write), so that the
   * synchronous `toStored` of the write path finds it. Nothing for a
   * version that converts at once.
   */
  async aheadToStored(obj: KubeObject): Promise<void> {
    const later = this.version.convertsLater;
    if (!later) return;
    const [converted] = await later.convert([obj], this.storedApiVersion);
    this.convertedToStored.set(JSON.stringify(obj), labelled(converted!, this.storedApiVersion, this.stored.kind));
  }

  /** A pair the later conversion answered, kept both ways. */
  private remember(stored: KubeObject, served: KubeObject): void {
    this.convertedFromStored.set(JSON.stringify(stored), served);
    this.convertedToStored.set(JSON.stringify(served), stored);
  }

  /** A write's object of the served version in the stored shape (for a version converted later, the conversion made ahead). */
  toStoredForWrite(obj: KubeObject): KubeObject {
    return this.toStored(obj);
  }

  /**
   * An object of the served version in the stored shape. For a version
   * converted later, the conversion made ahead (`aheadToStored`, or the
   * pair of a `fromStoredAll`); see `missedConversion` for one that was not.
   */
  toStored(obj: KubeObject): KubeObject {
    if (this.convertsLater) return this.madeAhead(this.convertedToStored, obj, this.storedApiVersion, () => this.version.toStored(structuredClone(obj)));
    return labelled(this.version.toStored(structuredClone(obj)), this.storedApiVersion, this.stored.kind);
  }

  /** Errors of the rules of writes through this version, for an object in its shape. */
  validate(obj: KubeObject): FieldError[] {
    return this.version.validate?.(obj) ?? [];
  }

  /**
   * A stored object in the served version's shape. For a version converted
   * later, the conversion made ahead (`aheadFromStored`, `fromStoredAll`).
   */
  fromStored(obj: KubeObject): KubeObject {
    if (this.convertsLater) return this.madeAhead(this.convertedFromStored, obj, this.apiVersion, () => this.version.fromStored(structuredClone(obj)));
    return labelled(this.version.fromStored(structuredClone(obj)), this.apiVersion, this.stored.kind);
  }

  /**
   * A conversion made ahead, as a copy. One that was not is noted for
   * `withConversionsAhead`, which answers it by relabelling for its first
   * pass and runs again once it is made; outside one it is a 500, never an
   * object of the wrong shape.
   */
  private madeAhead(memo: BoundedMap<string, KubeObject>, obj: KubeObject, apiVersion: string, relabelled: () => KubeObject): KubeObject {
    const done = memo.get(JSON.stringify(obj));
    if (done) return structuredClone(done);
    if (!missed) throw errors.internal(`conversion webhook for ${String(obj.apiVersion ?? '')}, Kind=${this.stored.kind} failed: the object was not converted ahead`);
    missed.push({ codec: this, obj, toStored: memo === this.convertedToStored });
    return labelled(relabelled(), apiVersion, this.stored.kind);
  }

  /** A list of stored objects (or a list answer) in the served version. */
  fromStoredList(list: KubeObject): KubeObject {
    return { ...list, apiVersion: this.apiVersion, items: (list.items as KubeObject[]).map((item) => this.fromStored(item)) };
  }
}


/** Conversions a pass of `withConversionsAhead` found not made, while one runs. */
let missed: { codec: VersionCodec; obj: KubeObject; toStored: boolean }[] | undefined;

/**
 * Runs a synchronous `pass` that converts between versions (managed fields
 * at every manager's version) until every conversion it needs was made
 * ahead: a conversion not made yet is answered by relabelling and noted,
 * the noted ones are made (one review per codec and direction), and the
 * pass runs again. A version that converts at once never needs a second pass.
 */
export async function withConversionsAhead<T>(pass: () => T): Promise<T> {
  for (let round = 0; ; round++) {
    const noted: NonNullable<typeof missed> = [];
    missed = noted;
    let result: T | undefined;
    let failure: unknown;
    try {
      result = pass();
    } catch (e) {
      failure = e;
    } finally {
      missed = undefined;
    }
    if (!noted.length) {
      if (failure !== undefined) throw failure;
      return result as T;
    }
    if (round === maxPasses) throw errors.internal('conversion webhook: the conversions of the write did not settle');
    // Objects from the stored version first: what a pass converts back may be a relabelled stand-in until they are made.
    const fromStored = noted.filter((n) => !n.toStored);
    for (const codec of new Set(fromStored.map((n) => n.codec))) await codec.aheadFromStored(fromStored.filter((n) => n.codec === codec).map((n) => n.obj));
    if (fromStored.length) continue;
    for (const n of noted) await n.codec.aheadToStored(n.obj);
  }
}

/** Passes of `withConversionsAhead` before it gives up (each may meet objects the previous one made). */
const maxPasses = 4;

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
