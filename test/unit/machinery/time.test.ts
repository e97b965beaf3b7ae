import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatInstant, parseGoTime, rfc3339Layout, rfc3339MicroLayout, TimeParseError, zeroTimeSeconds } from '../../../src/machinery/time.js';

const utc = (text: string, micro = false) => formatInstant(parseGoTime(text, micro), micro ? 6 : 0);
const message = (text: string, micro = false) => {
  try {
    parseGoTime(text, micro);
  } catch (e) {
    assert.ok(e instanceof TimeParseError);
    return e.message;
  }
  assert.fail(`${JSON.stringify(text)} parsed`);
};

test('RFC 3339 times read as Go reads them, written back in UTC', () => {
  assert.equal(utc('2024-01-02T03:04:05Z'), '2024-01-02T03:04:05Z');
  assert.equal(utc('2024-01-02T03:04:05+02:00'), '2024-01-02T01:04:05Z');
  assert.equal(utc('2024-01-02T23:30:00-01:30'), '2024-01-03T01:00:00Z');
  // A fraction the layout does not name is read (any length, comma too) and dropped on output.
  assert.equal(utc('2024-01-02T03:04:05.123456789123Z'), '2024-01-02T03:04:05Z');
  assert.equal(utc('2024-01-02T03:04:05,5Z'), '2024-01-02T03:04:05Z');
  // Go accepts a one-digit hour and offsets up to 24:60.
  assert.equal(utc('2024-01-02T3:04:05Z'), '2024-01-02T03:04:05Z');
  assert.equal(utc('2024-01-02T03:04:05+24:00'), '2024-01-01T03:04:05Z');
  assert.equal(utc('2024-02-29T00:00:00Z'), '2024-02-29T00:00:00Z');
  assert.equal(utc('0000-01-01T00:00:00Z'), '0000-01-01T00:00:00Z');
  assert.deepEqual(parseGoTime('0001-01-01T00:00:00Z'), { seconds: zeroTimeSeconds, nanos: 0 });
  assert.deepEqual(parseGoTime('1970-01-01T00:00:01.5Z'), { seconds: 1, nanos: 500_000_000 });
});

test('MicroTime needs exactly six digits of fraction', () => {
  assert.equal(utc('2024-01-02T03:04:05.123456Z', true), '2024-01-02T03:04:05.123456Z');
  assert.equal(utc('2024-01-02T03:04:05.000001+01:00', true), '2024-01-02T02:04:05.000001Z');
  assert.equal(message('2024-01-02T03:04:05Z', true),
    `parsing time "2024-01-02T03:04:05Z" as "${rfc3339MicroLayout}": cannot parse "Z" as ".000000"`);
  assert.equal(message('2024-01-02T03:04:05.12345Z', true),
    `parsing time "2024-01-02T03:04:05.12345Z" as "${rfc3339MicroLayout}": cannot parse ".12345Z" as ".000000"`);
  assert.equal(message('2024-01-02T03:04:05.1234567Z', true),
    `parsing time "2024-01-02T03:04:05.1234567Z" as "${rfc3339MicroLayout}": cannot parse "7Z" as "Z07:00"`);
  assert.equal(message('2024-01-02T03:04:05.-12345Z', true), 'parsing time "2024-01-02T03:04:05.-12345Z": fractional second out of range');
});

test('what Go refuses, with Go\'s messages', () => {
  const as = `as "${rfc3339Layout}"`;
  assert.equal(message('x'), `parsing time "x" ${as}: cannot parse "x" as "2006"`);
  assert.equal(message(''), `parsing time "" ${as}: cannot parse "" as "2006"`);
  assert.equal(message('2024'), `parsing time "2024" ${as}: cannot parse "" as "-"`);
  assert.equal(message('2024-1-02T03:04:05Z'), `parsing time "2024-1-02T03:04:05Z" ${as}: cannot parse "1-02T03:04:05Z" as "01"`);
  assert.equal(message('2024-01-02 03:04:05Z'), `parsing time "2024-01-02 03:04:05Z" ${as}: cannot parse " 03:04:05Z" as "T"`);
  assert.equal(message('2024-01-02t03:04:05Z'), `parsing time "2024-01-02t03:04:05Z" ${as}: cannot parse "t03:04:05Z" as "T"`);
  assert.equal(message('2024-01-02T03:04:05'), `parsing time "2024-01-02T03:04:05" ${as}: cannot parse "" as "Z07:00"`);
  assert.equal(message('2024-01-02T03:04:05z'), `parsing time "2024-01-02T03:04:05z" ${as}: cannot parse "z" as "Z07:00"`);
  assert.equal(message('2024-01-02T03:04:05*02:00'), `parsing time "2024-01-02T03:04:05*02:00" ${as}: cannot parse "*02:00" as "Z07:00"`);
  assert.equal(message('2024-13-02T03:04:05Z'), 'parsing time "2024-13-02T03:04:05Z": month out of range');
  assert.equal(message('2023-02-29T03:04:05Z'), 'parsing time "2023-02-29T03:04:05Z": day out of range');
  assert.equal(message('2024-01-02T24:04:05Z'), 'parsing time "2024-01-02T24:04:05Z": hour out of range');
  assert.equal(message('2024-01-02T03:60:05Z'), 'parsing time "2024-01-02T03:60:05Z": minute out of range');
  assert.equal(message('2024-01-02T03:04:60Z'), 'parsing time "2024-01-02T03:04:60Z": second out of range');
  assert.equal(message('2024-01-02T03:04:05+25:00'), 'parsing time "2024-01-02T03:04:05+25:00": time zone offset hour out of range');
  assert.equal(message('2024-01-02T03:04:05Zjunk'), 'parsing time "2024-01-02T03:04:05Zjunk": extra text: "junk"');
  // Go quotes bytes outside printable ASCII as \xNN, and escapes quotes.
  assert.equal(message('é"\n'), `parsing time "\\xc3\\xa9\\"\\x0a" ${as}: cannot parse "\\xc3\\xa9\\"\\x0a" as "2006"`);
});

test('formatting refuses years outside 0..9999', () => {
  assert.throws(() => formatInstant(parseGoTime('9999-12-31T23:59:59-01:00'), 0), RangeError);
  assert.throws(() => formatInstant(parseGoTime('0000-01-01T00:00:00+01:00'), 0), RangeError);
  assert.equal(formatInstant({ seconds: 0, nanos: 1_500_000_000 }, 6), '1970-01-01T00:00:01.500000Z');
});
