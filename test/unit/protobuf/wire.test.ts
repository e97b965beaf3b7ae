import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufError, Reader, WireType, Writer } from '../../../src/machinery/protobufwire.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');

test('varints are little-endian groups of seven bits', () => {
  const cases: Array<[number | bigint, string]> = [
    [0, '00'], [1, '01'], [127, '7f'], [128, '8001'], [300, 'ac02'],
    [2 ** 32, '8080808010'], [1704164645, 'a5facdac06'],
  ];
  for (const [n, h] of cases) assert.equal(hex(new Writer().varint(n).finish()), h, String(n));
});

test('negative integers take ten bytes, as proto int32/int64 write them', () => {
  assert.equal(hex(new Writer().int(-1).finish()), 'ffffffffffffffffff01');
  assert.equal(hex(new Writer().int(-62135596800).finish()), '8092b8c398feffffff01');
  assert.equal(new Reader(bytes('ffffffffffffffffff01')).int64(), -1);
  assert.equal(new Reader(bytes('ffffffffffffffffff01')).int32(), -1);
  assert.equal(new Reader(bytes('8092b8c398feffffff01')).int64(), -62135596800);
});

test('tags, strings and bytes read back', () => {
  const buf = new Writer().tag(1, WireType.lengthDelimited).string('héllo').tag(15, WireType.varint).varint(5).finish();
  const r = new Reader(buf);
  assert.deepEqual(r.tag(), { field: 1, wireType: 2 });
  assert.equal(r.string(), 'héllo');
  assert.deepEqual(r.tag(), { field: 15, wireType: 0 });
  assert.equal(r.int64(), 5);
  assert.equal(r.done, true);
});

test('skip steps over every wire type, groups included', () => {
  // field 1 fixed64, field 2 fixed32, field 3 group holding a varint field, field 4 varint
  const buf = bytes('09 0102030405060708  15 01020304  1b 0801 1c  2007');
  const r = new Reader(buf);
  for (let i = 0; i < 3; i++) r.skip(r.tag().wireType);
  assert.deepEqual(r.tag(), { field: 4, wireType: 0 });
  assert.equal(r.int64(), 7);
  assert.equal(r.done, true);
});

test('malformed input fails with a ProtobufError', () => {
  const bad: Array<[string, (r: Reader) => unknown]> = [
    ['80', (r) => r.varint64()], // truncated varint
    ['ffffffffffffffffffff01', (r) => r.varint64()], // eleven bytes
    ['05 6162', (r) => r.bytes()], // length past the end
    ['ffffffffffffffff7f', (r) => r.bytes()], // absurd length
    ['0102', (r) => r.skip(WireType.fixed64)],
    ['01', (r) => r.skip(WireType.fixed32)],
    ['', (r) => r.skip(7)],
    ['', (r) => r.skip(WireType.endGroup)],
    ['00', (r) => r.tag()], // field number 0
  ];
  for (const [h, read] of bad) assert.throws(() => read(new Reader(bytes(h))), ProtobufError, h);
});

test('a reader stays inside its window', () => {
  const buf = bytes('0a02 6869 1001');
  const r = new Reader(buf, 0, 4);
  r.tag();
  assert.equal(r.string(), 'hi');
  assert.equal(r.done, true);
  assert.throws(() => new Reader(buf, 0, 3).skip(WireType.lengthDelimited), ProtobufError);
});
