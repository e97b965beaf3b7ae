// The format library (format.named, format.<name>(), <format>.validate) and
// optional types, against upstream's TestFormat and cel-go's optional
// values: each row is an expression and what it evaluates to (the cases
// follow upstream's tables; the strings checked are partly ours).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression } from '../../../../src/api/validation/index.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

/** Evaluates `expr` to a plain value: optionals as { none } / { of }, lists as arrays. */
function evaluate(expr: string): unknown {
  const c = compileExpression(expr, ['self']);
  if (typeof c === 'string') return `compile: ${c}`;
  const r = c.eval({}, 1_000_000);
  return r.error !== undefined ? `error: ${r.error}` : r.value;
}

const mismatches = (rows: [string, unknown][]) => rows.filter(([expr, want]) => evaluate(expr) !== want).map(([expr, want]) => `${expr}: ${String(evaluate(expr))}, not ${String(want)}`);

const dnsLabel = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const dns1035 = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const namePart = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const labelValue = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const names = ['dns1123Label', 'dns1123Subdomain', 'dns1035Label', 'qualifiedName', 'dns1123LabelPrefix', 'dns1123SubdomainPrefix',
  'dns1035LabelPrefix', 'labelValue', 'uri', 'uuid', 'byte', 'date', 'datetime'];

/** `format.<f>().validate(s)`: none when valid (true), else the one message of the list. */
const validRows: [string, string][] = [
  ['dns1123Label', 'my-label-name'], ['dns1123Subdomain', 'apiextensions.k8s.io'], ['dns1035Label', 'my-label-name'],
  ['qualifiedName', 'apiextensions.k8s.io/v1beta1'], ['qualifiedName', 'my.name'], ['dns1123LabelPrefix', 'my-label-prefix-'],
  ['dns1123SubdomainPrefix', 'mysubdomain.prefix.-'], ['dns1035LabelPrefix', 'my-label-prefix-'], ['uri', 'http://example.com'],
  ['uri', '/just/a/path'], ['uri', 'mailto:someone'], ['uuid', '123e4567-e89b-12d3-a456-426614174000'], ['byte', 'aGVsbG8='],
  ['date', '2021-01-01'], ['datetime', '2021-01-01T00:00:00Z'], ['labelValue', 'my-cool-label-Value'], ['labelValue', ''],
];
const invalidRows: [string, string, string][] = [
  ['dns1123Label', 'contains a space', dnsLabel], ['dns1123Subdomain', 'contains a space', subdomain], ['dns1035Label', 'contains a space', dns1035],
  ['qualifiedName', 'contains a space', namePart], ['dns1123LabelPrefix', 'contains a space-', dnsLabel],
  ['dns1123SubdomainPrefix', 'contains a space-', subdomain], ['dns1035LabelPrefix', 'contains a space-', dns1035],
  ['byte', 'aGVsbG8', 'invalid base64'], ['date', '2020-01-32', 'invalid date'], ['datetime', '2020-01-32T00:00:00Z', 'invalid datetime'],
  ['uuid', 'not-a-uuid', 'does not match the UUID format'], ['labelValue', 'my-cool-label-Value!!\n\n!!!', labelValue],
  ['uri', 'example.com', 'parse "example.com": invalid URI for request'], ['uri', ':x', 'parse ":x": missing protocol scheme'],
  ['uri', 'http://a b.com/', 'parse "http://a b.com/": invalid character " " in host name'],
];

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

describe('the format library', () => {
  test('validate: optional.none for a valid string, an optional list of upstream\'s messages otherwise', () => {
    assert.deepEqual(mismatches(validRows.map(([f, s]) => [`format.${f}().validate(${quote(s)}) == optional.none()`, true])), []);
    assert.deepEqual(mismatches(invalidRows.map(([f, s, msg]) => [`format.${f}().validate(${quote(s)}).value() == [${quote(msg)}]`, true])), []);
  });

  test('format.named: an optional of the format, none for unknown names; formats equal only themselves', () => {
    const rows: [string, unknown][] = [['format.named("unknown").hasValue()', false], ['format.named("__proto__").hasValue()', false]];
    for (const a of names) {
      rows.push([`format.named("${a}").hasValue()`, true], [`format.named("${a}").value() == format.${a}()`, true]);
      for (const b of names) if (a !== b) rows.push([`format.${a}() == format.${b}()`, false]);
    }
    rows.push(["format.named('dns1123Label').value().validate('Bad').value()[0].startsWith('a lowercase RFC 1123 label')", true]);
    assert.deepEqual(mismatches(rows), []);
  });
});

describe('optional types', () => {
  test('optional_type names the type of every optional; type() of an optional is it', () => {
    assert.deepEqual(mismatches([
      ['type(optional.of(1)) == optional_type', true],
      ['type(optional.none()) == optional_type', true],
      ["type({'a': 1}.?a) == optional_type", true],
      ["type({'a': 1}.?b) == optional_type", true],
      ["type(format.named('uri')) == optional_type", true],
      ["type(format.uri().validate('x')) == optional_type", true],
      ['type(optional.of(1)) == map', false],
      ['type(optional.of(1)) != optional_type', false],
      ['type(1) == optional_type', false],
      ["type({'a': 1}) == optional_type", false],
      ['type(optional_type) == type', true],
      ['optional_type == optional_type', true],
      ['optional_type == int', false],
      ['type(optional.of(1).value()) == int', true],
    ]), []);
  });
});
