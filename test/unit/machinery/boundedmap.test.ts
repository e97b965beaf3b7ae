// The bounded look-aside map: at most `limit` entries, the oldest forgotten
// first, a key set again counted as the newest.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedMap } from '../../../src/machinery/boundedmap.js';

test('holds at most its limit, forgetting the oldest; a key set again is the newest', () => {
  const m = new BoundedMap<string, number>(2);
  m.set('a', 1).set('b', 2);
  m.set('a', 3);
  m.set('c', 4);
  assert.deepEqual([...m], [['a', 3], ['c', 4]]);
  m.set('c', 5);
  assert.equal(m.size, 2);
  assert.deepEqual([...m.keys()], ['a', 'c']);
});
