import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareKeys, prefixEnd, rangeStart } from '../../../src/storage/keys.js';

const samples = ['', 'a', 'a/', 'a/b', 'a0', 'B', '\u007f', '\u00e9', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\ud800\udc00', '\ud83d\ude00', '\udbff\udfff', 'a\udbff\udfff', 'a\udbff\udfffz'];

test('compareKeys orders like the UTF-8 bytes', () => {
  for (const x of samples) {
    for (const y of samples) {
      assert.equal(Math.sign(compareKeys(x, y)), Buffer.compare(Buffer.from(x), Buffer.from(y)), `${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
    }
  }
});

test('prefixEnd bounds exactly the keys under the prefix', () => {
  assert.equal(prefixEnd('/registry/pods/'), '/registry/pods0');
  assert.equal(prefixEnd(''), undefined);
  assert.equal(prefixEnd('\udbff\udfff'), undefined);
  assert.equal(prefixEnd('a\udbff\udfff'), 'b');
  assert.equal(prefixEnd('a\ud7ff'), 'a\ue000');
  for (const prefix of samples.filter((s) => s !== '')) {
    const end = prefixEnd(prefix);
    for (const key of samples) {
      const under = key.startsWith(prefix);
      const inRange = compareKeys(key, prefix) >= 0 && (end === undefined || compareKeys(key, end) < 0);
      assert.equal(inRange, under, `${JSON.stringify(key)} under ${JSON.stringify(prefix)}`);
    }
  }
});

test('rangeStart takes the later of prefix and start key', () => {
  assert.equal(rangeStart('/a/', undefined), '/a/');
  assert.equal(rangeStart('/a/', '/a/x'), '/a/x');
  assert.equal(rangeStart('/a/', '/'), '/a/');
});

test('the cluster store prefix maps onto the /registry root of every key', async () => {
  const { keyPrefixFor, parseStoreAddress } = await import('../../../src/storage/index.js');
  assert.equal(keyPrefixFor('/registry'), '');
  assert.equal(keyPrefixFor('/registry/'), '');
  assert.equal(keyPrefixFor('/tenant-a/registry'), '/tenant-a');
  assert.equal(keyPrefixFor('/other'), '/other');
  assert.deepEqual(parseStoreAddress('sqlite:/data'), { kind: 'sqlite', dataDir: '/data' });
  assert.deepEqual(parseStoreAddress('etcd3:http://a:1,http://b:2', 5000), { kind: 'etcd3', dataDir: '', servers: ['http://a:1', 'http://b:2'], requestTimeoutMs: 5000 });
  assert.throws(() => parseStoreAddress('sqlite:'), /needs a data folder/);
  assert.throws(() => parseStoreAddress('mysql:x'), /unknown store "mysql"/);
});
