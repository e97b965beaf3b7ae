// A user's extra information travels in protobuf as upstream's
// map<string, ExtraValue{repeated string items = 1}>, and reads back as the
// JSON shape (a map of string lists).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage, encodeMessage } from '../../../src/api/protobuf/index.js';
import { selfSubjectReviews } from '../../../src/api/authentication/v1/index.js';
import { Reader } from '../../../src/machinery/protobufwire.js';

test('UserInfo.extra round-trips as a map of ExtraValue messages', () => {
  const review = {
    metadata: { creationTimestamp: '2030-01-01T00:00:00Z' },
    status: { userInfo: { username: 'u', uid: '1', groups: ['g1', 'g2'], extra: { b: ['x', 'y'], a: [], __proto__x: ['z'] } } },
  };
  const bytes = encodeMessage(review, selfSubjectReviews.schema);
  const back = decodeMessage(bytes, selfSubjectReviews.schema);
  assert.deepEqual(back.status, { userInfo: { username: 'u', uid: '1', groups: ['g1', 'g2'], extra: { a: [], b: ['x', 'y'], __proto__x: ['z'] } } });

  // The wire: status(2) > userInfo(1) > extra(4) entries {key=1, value=2 {items=1...}}, keys sorted.
  const field = (buf: Uint8Array, number: number): Uint8Array[] => {
    const r = new Reader(buf);
    const out: Uint8Array[] = [];
    while (!r.done) {
      const { field: f, wireType } = r.tag();
      if (f === number) out.push(r.bytes());
      else r.skip(wireType);
    }
    return out;
  };
  const userInfo = field(field(bytes, 2)[0]!, 1)[0]!;
  const entries = field(userInfo, 4);
  assert.equal(entries.length, 3);
  const decode = (b: Uint8Array) => Buffer.from(b).toString('utf8');
  assert.deepEqual(entries.map((e) => decode(field(e, 1)[0]!)), ['__proto__x', 'a', 'b']);
  assert.deepEqual(field(field(entries[2]!, 2)[0]!, 1).map(decode), ['x', 'y']);
});
