// The protobuf form of the v2 document decodes back (with a reader written for
// the test) to the same content as the JSON form.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenApiService } from '../../../src/server/openapi/index.js';
import { catalogRegistry } from '../../support/catalog.js';
import { encodeDocument } from '../../../src/server/openapi/v2-proto.js';
import { ProtoWriter } from '../../../src/server/openapi/proto-writer.js';
import { all, bool, one, readFields, str, strs } from './proto-reader.js';

type J = Record<string, any>;
const json = new OpenApiService(catalogRegistry(), { version: 'v1.32.0' }).v2Document().doc as J;
const bytes = encodeDocument(json);

/** `Any.yaml` holds JSON text (valid YAML); parse it back. */
const anyValue = (b: Buffer) => JSON.parse(str(b, 2)!);

function extensions(msg: Buffer, no: number): J {
  const out: J = {};
  for (const named of all(msg, no)) out[str(named, 1)!] = anyValue(one(named, 2)!);
  return out;
}

/** Decodes an openapi_v2.Schema back to its JSON form (the fields our documents use). */
function decodeSchema(b: Buffer): J {
  const s: J = {};
  const set = (key: string, v: unknown) => { if (v !== undefined) s[key] = v; };
  set('$ref', str(b, 1));
  set('format', str(b, 2));
  set('description', str(b, 4));
  const dflt = one(b, 5);
  if (dflt) s.default = anyValue(dflt);
  const required = strs(b, 19);
  if (required.length) s.required = required;
  const enums = all(b, 20).map(anyValue);
  if (enums.length) s.enum = enums;
  const ap = one(b, 21);
  if (ap) s.additionalProperties = decodeSchema(one(ap, 1)!);
  const type = one(b, 22);
  if (type) s.type = strs(type, 1)[0];
  const items = one(b, 23);
  if (items) s.items = decodeSchema(one(items, 1)!);
  const props = one(b, 25);
  if (props) {
    s.properties = {};
    for (const named of all(props, 1)) s.properties[str(named, 1)!] = decodeSchema(one(named, 2)!);
  }
  return Object.assign(s, extensions(b, 31));
}

test('writer basics: varints, zero values, nested messages', () => {
  const w = new ProtoWriter();
  w.string(1, 'hi').string(2, '').int64(3, 300).bool(4, false).bool(5, true).message(6, (m) => m.string(1, 'x'));
  w.strings(7, ['', 'b']).double(8, 1.5);
  const f = readFields(w.finish());
  assert.deepEqual(f.map((x) => x.no), [1, 3, 5, 6, 7, 7, 8]);
  assert.equal(f[1].value, 300);
  assert.equal((f[6].value as Buffer).readDoubleLE(), 1.5);
  assert.equal(str(f[3].value as Buffer, 1), 'x');
  assert.equal((f[4].value as Buffer).length, 0, 'empty elements of repeated strings are kept');
  assert.throws(() => new ProtoWriter().int64(1, -1));
});

test('document header and info', () => {
  assert.equal(str(bytes, 1), '2.0');
  const info = one(bytes, 2)!;
  assert.equal(str(info, 1), json.info.title);
  assert.equal(str(info, 2), 'v1.32.0');
  const security = one(one(one(bytes, 13)!, 1)!, 2)!; // SecurityDefinitions -> Named -> item
  assert.equal(str(one(security, 2)!, 3), 'header', 'BearerToken is an apiKey in the header');
});

test('every definition decodes back to its JSON form', () => {
  const defs = all(one(bytes, 9)!, 1);
  assert.equal(defs.length, Object.keys(json.definitions).length);
  for (const named of defs) {
    const name = str(named, 1)!;
    assert.deepEqual(decodeSchema(one(named, 2)!), json.definitions[name], name);
  }
});

test('every path and operation decodes back', () => {
  const paths = all(one(bytes, 8)!, 2);
  assert.deepEqual(paths.map((p) => str(p, 1)), Object.keys(json.paths));
  const methods: [string, number][] = [['get', 2], ['put', 3], ['post', 4], ['delete', 5], ['patch', 8]];
  for (const named of paths) {
    const path = str(named, 1)!;
    const item = one(named, 2)!;
    const expected = json.paths[path];
    for (const [method, no] of methods) {
      const op = one(item, no);
      assert.equal(Boolean(op), Boolean(expected[method]), `${method} ${path}`);
      if (!op) continue;
      const want = expected[method];
      assert.equal(str(op, 5), want.operationId);
      assert.equal(str(op, 3), want.description);
      assert.deepEqual(strs(op, 7), want.consumes);
      assert.deepEqual(strs(op, 6), want.produces);
      assert.equal(bool(op, 11), want.deprecated === true);
      const ext = extensions(op, 13);
      assert.deepEqual(ext['x-kubernetes-group-version-kind'], want['x-kubernetes-group-version-kind']);
      assert.equal(ext['x-kubernetes-action'], want['x-kubernetes-action']);
      // ParametersItem -> Parameter -> Body (1) or NonBody (2) -> query (3) / path (4).
      const params = all(op, 8).map((pi) => {
        const p = one(pi, 1)!;
        const body = one(p, 1);
        if (body) return { name: str(body, 2), in: 'body', ref: decodeSchema(one(body, 5)!).$ref };
        const query = one(one(p, 2)!, 3)!;
        return { name: str(query, 4), in: str(query, 2), type: str(query, 6), unique: bool(query, 20) };
      });
      assert.deepEqual(params, (want.parameters ?? []).map((p: J) => (p.in === 'body'
        ? { name: p.name, in: 'body', ref: p.schema.$ref }
        : { name: p.name, in: p.in, type: p.type, unique: true })));
      const responses = all(one(op, 9)!, 1).map((nr) => {
        const r = one(one(nr, 2)!, 1)!;
        const schema = one(r, 2);
        return [str(nr, 1), str(r, 1), schema ? decodeSchema(one(schema, 1)!).$ref : undefined];
      });
      assert.deepEqual(responses, Object.entries(want.responses).map(([code, r]: [string, any]) => [code, r.description, r.schema?.$ref]));
    }
    // Path-level parameters: PathParameterSubSchema (4) keeps name at 4 and required at 1.
    const pathParams = all(item, 9).map((pi) => one(one(one(pi, 1)!, 2)!, 4)).filter(Boolean) as Buffer[];
    assert.deepEqual(pathParams.map((p) => [str(p, 4), bool(p, 1)]),
      (expected.parameters ?? []).filter((p: J) => p.in === 'path').map((p: J) => [p.name, true]));
  }
});
