// Values a comprehension grows one entry at a time: list `+` for plain
// lists, and transformMap's insertion of one entry into a map.
//
// List `+` for plain lists. The library's concatenation is a view over its
// two parts: cheap, but a comprehension's accumulator (`map`, `filter`,
// `transformList` add one element per step) became a chain of views one
// level per element, so reading the result of a map over 20,000 items
// recursed 20,000 deep and overflowed the stack. Upstream appends to its
// accumulator in place. Here a list built by appending keeps its items in
// one array and knows how many of them it shows; appending to the list that
// shows the whole array pushes onto it (as Go's append does with spare
// capacity), so every earlier value still sees only its own items. Large
// right operands stay views: copying them would let `l + l` doubling fill
// memory for a charge of a tenth of it.
//
// transformMap's insertion copied the whole map at each entry (and the
// library's map looks a missing integer key up by scanning every key), so
// 20,000 entries took minutes of the event loop for a cost of 80,000. A
// map built by insertion keeps its entries in one table, each with its
// place in the order of insertion, and shows the first `size` of them;
// inserting into the map that shows them all adds in place, likewise.

import { celListConcat, isCelUint, type CelList, type CelMap, type CelValue } from '@bufbuild/cel';

const listMark = Symbol.for('@bufbuild/cel/list');

/** Up to this many items on the right are copied; more stay a view. */
const copiedAtMost = 16;

class AppendedList {
  readonly [listMark] = {};
  constructor(readonly items: CelValue[], readonly size: number) {}

  get(index: number): CelValue | undefined {
    return index >= 0 && index < this.size ? this.items[index] : undefined;
  }

  *values(): IterableIterator<CelValue> {
    for (let i = 0; i < this.size; i++) yield this.items[i]!;
  }

  [Symbol.iterator](): IterableIterator<CelValue> {
    return this.values();
  }
}

/** `a + b` for two plain lists. */
export function appendLists(a: CelList, b: CelList): CelValue {
  if (b.size === 0) return a;
  if (a.size === 0) return b;
  if (b.size > copiedAtMost) return celListConcat(a, b);
  if (a instanceof AppendedList && a.size === a.items.length) {
    const more = [...b];
    for (const x of more) a.items.push(x);
    return new AppendedList(a.items, a.items.length) as unknown as CelList;
  }
  if (a.size > copiedAtMost) return celListConcat(a, b);
  const items = [...a, ...b];
  return new AppendedList(items, items.length) as unknown as CelList;
}

const mapMark = Symbol.for('@bufbuild/cel/map');

/** The table key of a map key: numbers alike across int, uint and double, as CEL compares keys. */
function tableKey(key: unknown): unknown {
  if (isCelUint(key)) return key.value;
  if (typeof key === 'number' && Number.isInteger(key)) return BigInt(key);
  return key;
}

interface Entry { key: CelValue; value: CelValue; place: number }

class InsertedMap {
  readonly [mapMark] = {};
  constructor(readonly table: Map<unknown, Entry>, readonly order: Entry[], readonly size: number) {}

  private entry(key: unknown): Entry | undefined {
    const e = this.table.get(tableKey(key));
    return e !== undefined && e.place < this.size ? e : undefined;
  }

  get(key: unknown): CelValue | undefined { return this.entry(key)?.value; }
  has(key: unknown): boolean { return this.entry(key) !== undefined; }
  forEach(callback: (value: CelValue, key: CelValue, map: InsertedMap) => void): void {
    for (let i = 0; i < this.size; i++) callback(this.order[i]!.value, this.order[i]!.key, this);
  }
  *entries(): IterableIterator<[CelValue, CelValue]> { for (let i = 0; i < this.size; i++) yield [this.order[i]!.key, this.order[i]!.value]; }
  *keys(): IterableIterator<CelValue> { for (let i = 0; i < this.size; i++) yield this.order[i]!.key; }
  *values(): IterableIterator<CelValue> { for (let i = 0; i < this.size; i++) yield this.order[i]!.value; }
  [Symbol.iterator](): IterableIterator<[CelValue, CelValue]> { return this.entries(); }
}

/** `m` with `key` set to `value`; undefined when `m` has `key` already. */
export function insertEntry(m: CelMap, key: CelValue, value: CelValue): CelValue | undefined {
  if (m.has(key as never)) return undefined;
  let table: Map<unknown, Entry>, order: Entry[];
  if (m instanceof InsertedMap && m.size === m.order.length) {
    ({ table, order } = m);
  } else {
    table = new Map();
    order = [];
    for (const [k, v] of m) { const e = { key: k as CelValue, value: v as CelValue, place: order.length }; order.push(e); table.set(tableKey(k), e); }
  }
  const e = { key, value, place: order.length };
  order.push(e);
  table.set(tableKey(key), e);
  return new InsertedMap(table, order, order.length) as unknown as CelValue;
}
