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

import { celListConcat, type CelList, type CelValue } from '@bufbuild/cel';

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
