import { test } from 'node:test';
import assert from 'node:assert/strict';
import { managerFromUserAgent, managerOrUserAgent, validateFieldManager } from '../../../src/machinery/managedfields/useragent.js';
import { validateManagedFields } from '../../../src/machinery/managedfields/entries.js';

test('default field manager is the User-Agent up to the first slash', () => {
  assert.equal(managerFromUserAgent('kubectl/v1.32.4 (linux/amd64) kubernetes/abcdef'), 'kubectl');
  assert.equal(managerFromUserAgent('Go-http-client/1.1'), 'Go-http-client');
  assert.equal(managerFromUserAgent('a\u0007b/1'), 'ab');
  assert.equal(managerFromUserAgent('x'.repeat(200)), 'x'.repeat(128));
  assert.equal(managerFromUserAgent('é'.repeat(100)), 'é'.repeat(64));
  assert.equal(managerFromUserAgent(undefined), '');
  assert.equal(managerOrUserAgent('explicit', 'kubectl/v1'), 'explicit');
  assert.equal(managerOrUserAgent('', 'kubectl/v1'), 'kubectl');
});

test('field manager and managedFields validation', () => {
  assert.deepEqual(validateFieldManager('ok-name'), []);
  assert.deepEqual(validateFieldManager('x'.repeat(129)).map((e) => e.describe()), ['fieldManager: Too long: may not be more than 128 bytes']);
  assert.deepEqual(validateFieldManager('a\tb').map((e) => e.describe()), ['fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)']);
  const errs = validateManagedFields([{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2' }, { manager: 'ok', operation: 'Apply' }]);
  assert.deepEqual(errs.map((e) => e.describe()), [
    'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
    'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
  ]);
});

test('a name of printable ASCII is checked in one test, with the answers of the character-by-character rules', () => {
  const unicodePrintable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
  for (let code = 0; code < 0x100; code++) {
    const ch = String.fromCharCode(code);
    assert.equal(validateFieldManager(`a${ch}b`).length === 0, unicodePrintable.test(ch), `U+${code.toString(16)}`);
    assert.equal(managerFromUserAgent(`a${ch}b/1`), unicodePrintable.test(ch) && ch !== '/' ? `a${ch}b` : ch === '/' ? 'a' : 'ab', `U+${code.toString(16)}`);
  }
  assert.deepEqual(validateFieldManager('x'.repeat(128)), []);
  assert.equal(validateFieldManager('x'.repeat(129)).length, 1);
});
