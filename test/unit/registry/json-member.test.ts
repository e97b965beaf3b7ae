import { test } from 'node:test';
import assert from 'node:assert/strict';
import { objectAlongPath } from '../../../src/registry/json-member.js';
import { seededRandom } from '../../support/random.js';

/** What JSON.parse of the whole gives at `path` (undefined: absent or not reachable through objects). */
function atPath(doc: unknown, path: string[]): unknown {
  let here = doc;
  for (const name of path) {
    if (here === null || typeof here !== 'object' || Array.isArray(here) || !Object.prototype.hasOwnProperty.call(here, name)) return undefined;
    here = (here as Record<string, unknown>)[name];
  }
  return here;
}

const names = ['spec', 'nodeName', 'metadata', 'status', 'sp\\u0065c', 'node\\"Name', '__proto__', 'x'];

/** Random JSON text with duplicate keys, escapes and whitespace, as JSON.parse reads it. */
function randomJson(random: () => number, depth: number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const ws = () => pick(['', '', ' ', '\n  ', '\t']);
  const r = random();
  if (depth > 3 || r < 0.3) {
    return pick(['"node-a"', '"n\\u00e9ud \\"b\\""', '12', '-3.5e2', 'true', 'false', 'null', '"{[\\\\"', '""']);
  }
  if (r < 0.45) return `[${ws()}${Array.from({ length: Math.floor(random() * 3) }, () => randomJson(random, depth + 1)).join(`,${ws()}`)}${ws()}]`;
  const members = Array.from({ length: Math.floor(random() * 5) }, () => `${ws()}"${pick(names)}"${ws()}:${ws()}${randomJson(random, depth + 1)}${ws()}`);
  return `{${members.join(',')}${ws()}}`;
}

test('a member read along its path is what a whole decode holds there, for duplicate keys, escapes, whitespace and missing levels', () => {
  const random = seededRandom(46);
  const paths = [['spec', 'nodeName'], ['spec'], ['metadata', 'x', 'nodeName'], ['__proto__', 'nodeName']];
  let found = 0;
  for (let n = 0; n < 3_000; n++) {
    const rest = randomJson(random, 0);
    const text = `{"spec":${randomJson(random, 1)}${rest.startsWith('{') && rest.length > 2 && !/^\{\s*\}$/.test(rest) ? `,${rest.slice(1)}` : '}'}`;
    const doc = JSON.parse(text) as unknown;
    for (const path of paths) {
      const partial = objectAlongPath(Buffer.from(text), path);
      assert.ok(partial !== undefined, text);
      assert.deepEqual(atPath(partial, path), atPath(doc, path), `${path.join('.')} of ${text}`);
      if (atPath(doc, path) !== undefined) found++;
    }
  }
  assert.ok(found > 1_000, `only ${found} paths held a value`);
});

test('the object read along a path sets no prototype and holds nothing off the path', () => {
  const partial = objectAlongPath(Buffer.from('{"__proto__":{"nodeName":"a"},"spec":{"nodeName":"n1","other":[1,{"nodeName":"no"}]},"status":{}}'), ['__proto__', 'nodeName'])!;
  assert.equal(Object.getPrototypeOf(partial), Object.prototype);
  assert.deepEqual(Object.keys(partial), ['__proto__']);
  assert.equal(({} as { nodeName?: string }).nodeName, undefined);
  assert.deepEqual(objectAlongPath(Buffer.from('{"spec":{"nodeName":"n1","other":[1,{"nodeName":"no"}]}}'), ['spec', 'nodeName']), { spec: { nodeName: 'n1' } });
});

test('bytes that are not a JSON object it can read answer undefined, for the caller to decode whole', () => {
  for (const text of ['', '[]', '"spec"', '{"spec":{"nodeName":"a"', '{"spec" {"nodeName":"a"}}', '{"spec":{"nodeName":"a}}', '{"spec":1,}x']) {
    assert.equal(objectAlongPath(Buffer.from(text), ['spec', 'nodeName']), undefined, text);
  }
});
