// Which of a range's `size` values are taken, one bit each, and how a free
// one is picked as upstream picks it: at random in the upper part of the
// range first, so that the lower `offset` values stay likely free for those
// who ask for a value by number (a DNS service at the tenth address), then
// in the lower part. The snapshot is upstream's: the bits as one big-endian
// unsigned integer, bit i set when value i is taken.

export class AllocationBitmap {
  private readonly bits: Uint8Array;
  private count = 0;

  constructor(readonly size: number, readonly offset = 0, private readonly random: (below: number) => number = randomBelow) {
    this.bits = new Uint8Array(Math.ceil(size / 8));
  }

  has(i: number): boolean {
    return i >= 0 && i < this.size && (this.bits[i >> 3]! & (1 << (i & 7))) !== 0;
  }

  /** Takes value `i`; false when it was taken already (or is outside the range). */
  allocate(i: number): boolean {
    if (i < 0 || i >= this.size || this.has(i)) return false;
    this.bits[i >> 3]! |= 1 << (i & 7);
    this.count++;
    return true;
  }

  /** Takes a free value and answers it; undefined when the range is full. */
  allocateNext(): number | undefined {
    if (this.count >= this.size) return undefined;
    const found = this.freeIn(this.offset, this.size) ?? this.freeIn(0, this.offset);
    if (found !== undefined) this.allocate(found);
    return found;
  }

  /** A free value of [from, to), scanning from a random start and wrapping around. */
  private freeIn(from: number, to: number): number | undefined {
    const span = to - from;
    if (span <= 0) return undefined;
    const start = this.random(span);
    for (let k = 0; k < span; k++) {
      const at = from + ((start + k) % span);
      if (!this.has(at)) return at;
    }
    return undefined;
  }

  release(i: number): void {
    if (!this.has(i)) return;
    this.bits[i >> 3]! &= ~(1 << (i & 7));
    this.count--;
  }

  get used(): number {
    return this.count;
  }

  get free(): number {
    return this.size - this.count;
  }

  forEach(visit: (i: number) => void): void {
    for (let i = 0; i < this.size; i++) if (this.has(i)) visit(i);
  }

  /** The taken values as upstream stores them: a big-endian integer's bytes, no leading zero byte. */
  snapshot(): Buffer {
    let top = this.bits.length;
    while (top > 0 && this.bits[top - 1] === 0) top--;
    return Buffer.from(this.bits.subarray(0, top)).reverse();
  }

  /** Replaces the taken values with a snapshot's; values beyond the range are dropped. */
  restore(data: Uint8Array): void {
    this.bits.fill(0);
    this.count = 0;
    const littleEndian = Buffer.from(data).reverse();
    for (let byte = 0; byte < littleEndian.length; byte++) {
      const b = littleEndian[byte]!;
      if (b === 0) continue;
      for (let bit = 0; bit < 8; bit++) if (b & (1 << bit)) this.allocate(byte * 8 + bit);
    }
  }
}

function randomBelow(n: number): number {
  return Math.floor(Math.random() * n);
}
