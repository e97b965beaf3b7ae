// The summary `npm run bench` prints after its table: every row with a
// target counted, each missed one named with its result and goal.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { targetSummary } from '../../../bench/targets.js';
import { target } from '../../../bench/table.js';

test('the target summary counts met and missed rows and names each missed one; rows without a target are not counted', () => {
  const rows = [
    { metric: 'restart', result: '457 ms', target: target('< 500 ms', true) },
    { metric: 'creates', result: '777 req/s', target: target('≥ 1,500 req/s', false) },
    { metric: 'no-work GET', result: '19,703 req/s', target: '—' },
  ];
  assert.equal(targetSummary(rows), 'targets: 1 of 2 met, 1 missed:\n  MISSED creates: 777 req/s (target ≥ 1,500 req/s)\n');
  assert.equal(targetSummary(rows.slice(0, 1)), 'targets: 1 of 1 met\n');
});
