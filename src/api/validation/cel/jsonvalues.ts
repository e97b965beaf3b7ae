// JSON data as CEL values without copying it: a map or a list over the
// parsed object itself, converting each value only when a rule reads it.
// The library's own maps are built from a Map of every entry and convert
// a nested object by copying it into another Map at each read; a rule that
// reads three fields of a fifty-field object should pay for three.
//
// The library recognises its maps and lists by two registered symbols (its
// `isCelMap` and `isCelList`), which these classes carry; they offer the
// same interface (size, get, has, iteration) and behave as the library's
// maps and lists of the same entries: a key with a null value is read as
// null and `has` reports it absent, as `celMap(new Map(...))` does.

import { isCelList, isCelMap, isCelUint, type CelList, type CelValue } from '@bufbuild/cel';
import { hasOwn } from '../../../machinery/ownkeys.js';

/** What a schema makes of a value as a rule reads it (typed.ts); `celOfJson` without one. */
export type ToCel = (v: unknown) => unknown;

const mapMark = Symbol.for('@bufbuild/cel/map');
const listMark = Symbol.for('@bufbuild/cel/list');

type Json = Record<string, unknown>;

function isPlainObject(v: object): v is Json {
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && !isCelMap(v) && !isCelList(v) && !isCelUint(v);
}

/** The CEL value of JSON with no schema to say more: objects are maps, arrays lists, numbers stay doubles. */
export function celOfJson(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return new JsonList(v, celOfJson);
  return isPlainObject(v) ? new JsonMap(v, undefined, celOfJson) : v;
}

/** How an object's property names read in CEL: `name` its property's CEL name, `property` the property a CEL name reads. */
export interface PropertyNames { name(property: string): string; property(name: string): string | undefined }

/**
 * A JSON object as a CEL map: `fields` converts the values of named keys,
 * `rest` those of any other key; `names`, for an object whose properties
 * rules read under escaped names (`__namespace__`, `a__dash__b`).
 */
export class JsonMap {
  constructor(private readonly obj: Json, private readonly fields: ReadonlyMap<string, ToCel> | undefined, private readonly rest: ToCel,
    private readonly names?: PropertyNames) {}

  get size(): number {
    return Object.keys(this.obj).length;
  }

  get(name: unknown): CelValue | undefined {
    const key = typeof name === 'string' && this.names ? this.names.property(name) : name;
    if (typeof key !== 'string' || !hasOwn(this.obj, key)) return undefined;
    const v = this.obj[key];
    if (v === undefined) return undefined;
    return (this.fields?.get(key) ?? this.rest)(v) as CelValue;
  }

  has(name: unknown): boolean {
    // A present value converts to a present one: its presence is read without converting it.
    const key = typeof name === 'string' && this.names ? this.names.property(name) : name;
    return typeof key === 'string' && hasOwn(this.obj, key) && this.obj[key] != undefined;
  }

  /** The keys as rules name them. */
  private names_(): string[] {
    const keys = Object.keys(this.obj);
    return this.names ? keys.map((k) => this.names!.name(k)) : keys;
  }

  keys(): IterableIterator<string> {
    return this.names_()[Symbol.iterator]();
  }

  *values(): IterableIterator<CelValue> {
    for (const k of this.names_()) yield this.get(k)!;
  }

  *entries(): IterableIterator<[string, CelValue]> {
    for (const k of this.names_()) yield [k, this.get(k)!];
  }

  forEach(callback: (value: CelValue, key: string, map: JsonMap) => void, thisArg?: unknown): void {
    for (const k of this.names_()) callback.call(thisArg, this.get(k)!, k, this);
  }

  [Symbol.iterator](): IterableIterator<[string, CelValue]> {
    return this.entries();
  }
}

/** A JSON array as a CEL list, `item` converting each item as it is read. */
export class JsonList {
  constructor(private readonly items: readonly unknown[], private readonly item: ToCel) {}

  get size(): number {
    return this.items.length;
  }

  get(index: number): CelValue | undefined {
    if (index < 0 || index >= this.items.length) return undefined;
    return this.item(this.items[index]) as CelValue;
  }

  *values(): IterableIterator<CelValue> {
    for (const x of this.items) yield this.item(x) as CelValue;
  }

  [Symbol.iterator](): IterableIterator<CelValue> {
    return this.values();
  }
}

// The library's marks, on the prototypes: nothing to allocate per value (the library asks with `in`).
Object.defineProperty(JsonMap.prototype, mapMark, { value: {} });
Object.defineProperty(JsonList.prototype, listMark, { value: {} });

/** A JSON list as the library's type, where its functions take one. */
export const asCelList = (l: JsonList): CelList => l as unknown as CelList;
