// Bytes a store or cache keeps for a long time get an allocation of their
// own. Node's small Buffers (Buffer.from of a string or of another Buffer,
// under 4 KiB) are slices of a shared 8 KiB pool, and a value decoded from a
// gRPC message is a slice of the message: a kept slice keeps the whole of
// what it is cut from alive (measured: about 8 KiB per cached value of 2 KiB).

/** A copy of `value` in an allocation of exactly its size. */
export function ownCopy(value: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(value.byteLength);
  copy.set(value);
  return copy;
}

/** `value` itself when it owns its whole allocation, else an own copy. */
export function ownBytes(value: Buffer): Buffer {
  return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value : ownCopy(value);
}
