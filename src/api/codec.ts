// Between a served version of a kind and its stored version (the hub). Every
// road that takes or gives objects at a version other than the stored one
// goes through one of these: the REST objects of that version, the watch
// encoder, admission reviews. The stored version needs none: its objects
// travel as stored.
//
// The declared conversion functions get a copy of their own (objects read
// from the cache are shared and frozen) and their answer is labelled with
// the target version, so a declaration only moves fields.

import { apiVersionOf, kindAt, type KindDefinition, type KindVersion, type KubeObject } from './kind.js';

export class VersionCodec {
  /** The kind as clients see it at this version. */
  readonly served: KindDefinition;
  /** `group/version` of the served version. */
  readonly apiVersion: string;
  private readonly storedApiVersion: string;
  private readonly version: KindVersion & Required<Pick<KindVersion, 'toStored' | 'fromStored'>>;

  constructor(readonly stored: KindDefinition, versionName: string) {
    const version = stored.versions.find((v) => v.name === versionName);
    if (!version || !version.toStored || !version.fromStored) {
      throw new Error(`kind ${stored.kind}: ${versionName} is not a version with conversions (the stored version is ${stored.version})`);
    }
    this.version = version as VersionCodec['version'];
    this.served = kindAt(stored, versionName);
    this.apiVersion = apiVersionOf(this.served);
    this.storedApiVersion = apiVersionOf(stored);
  }

  /** An object of the served version in the stored shape. */
  toStored(obj: KubeObject): KubeObject {
    return labelled(this.version.toStored(structuredClone(obj)), this.storedApiVersion, this.stored.kind);
  }

  /** A stored object in the served version's shape. */
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
    list = stored.versions.filter((v) => v.served && v.name !== stored.version).map((v) => new VersionCodec(stored, v.name));
    codecs.set(stored, list);
  }
  return list;
}

/** The codec of `version` of a stored kind, or undefined for the stored version (or one it does not have). */
export function codecFor(stored: KindDefinition, version: string): VersionCodec | undefined {
  return codecsOf(stored).find((c) => c.served.version === version);
}
