// The two log formats: klog's text lines (header, quoted message, key=value
// pairs written as klog writes them, multi-line values, nothing raw that a
// terminal would act on) and pino's JSON lines, from the same log calls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, goQuote, klogHeader } from '../../../src/server/logging.js';

function capture(format: 'text' | 'json', level = 'info') {
  const lines: string[] = [];
  const log = createLogger({ level, format, destination: { write: (line: string) => lines.push(line) } });
  return { log, lines };
}

test('klog header: severity letter, month and day, time to the microsecond, pid right-aligned in 7, file:line', () => {
  const micros = new Date(2026, 11, 7, 9, 5, 3, 42).getTime() * 1000 + 7;
  assert.equal(klogHeader(30, micros, 'start.js:12', 4242), 'I1207 09:05:03.042007    4242 start.js:12] ');
  assert.equal(klogHeader(40, micros, 'a.js:1', 1)[0], 'W');
  assert.equal(klogHeader(50, micros, 'a.js:1', 1)[0], 'E');
  assert.equal(klogHeader(20, micros, 'a.js:1', 1)[0], 'I', 'debug is info at a higher verbosity in klog');
});

test('text: the message quoted, then the pairs in order, strings quoted, numbers and booleans bare, the caller named', () => {
  const { log, lines } = capture('text');
  log.info({ url: 'https://127.0.0.1:6443', port: 6443, ready: true, nothing: null, list: ['a', 'b'] }, 'serving');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ logging\.test\.(ts|js):\d+\] "serving" url="https:\/\/127\.0\.0\.1:6443" port=6443 ready=true nothing=<nil> list=\["a","b"\]\n$/);
});

test('text: an error is its message; at error severity its stack follows as a multi-line value', () => {
  const { log, lines } = capture('text');
  log.warn({ err: new Error('store away') }, 'retrying');
  assert.match(lines[0]!, /^W.*\] "retrying" err="store away"\n$/);
  log.error({ err: new TypeError('boom'), auditID: 'abc' }, 'request failed unexpectedly');
  assert.match(lines[1]!, /^E.*\] "request failed unexpectedly" err="boom" stacktrace=<\n\tTypeError: boom\n\t    at .*\n/);
  assert.match(lines[1]!, / auditID="abc"\n$/);
});

test('text: quotes, backslashes and control characters are escaped as Go quotes them; a multi-line string is indented', () => {
  assert.equal(goQuote('say "hi"\\'), '"say \\"hi\\"\\\\"');
  assert.equal(goQuote('a\tb\r\x1b[31m\x7f\u2028é✓'), '"a\\tb\\r\\x1b[31m\\x7f\\u2028é✓"');
  const { log, lines } = capture('text');
  log.info({ path: '/api/v1/\x1b]0;owned\x07' }, 'hostile');
  assert.doesNotMatch(lines[0]!, /\x1b|\x07/, 'nothing a terminal acts on reaches it');
  log.info({ body: 'line one\nline \x1b two\n' }, 'several lines');
  assert.match(lines[1]!, /\] "several lines" body=<\n\tline one\n\tline \\x1b two\n >\n$/);
});

test('json: pino\'s lines as they are, the same calls', () => {
  const { log, lines } = capture('json');
  log.info({ url: 'https://x', port: 1 }, 'serving');
  const record = JSON.parse(lines[0]!);
  assert.equal(record.level, 30);
  assert.equal(record.msg, 'serving');
  assert.equal(record.url, 'https://x');
  assert.equal(typeof record.time, 'number');
});

test('the level filters both formats alike', () => {
  for (const format of ['text', 'json'] as const) {
    const { log, lines } = capture(format, 'warn');
    log.info('quiet');
    log.warn('loud');
    assert.equal(lines.length, 1, format);
  }
});
