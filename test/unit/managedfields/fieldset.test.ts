import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldSet } from '../../../src/machinery/managedfields/fieldset.js';
import { fromFieldsV1, toFieldsV1 } from '../../../src/machinery/managedfields/fieldsv1.js';
import { fieldPE as f, keyPE, parsePE, pathString, serializePE, type Path } from '../../../src/machinery/managedfields/pathelement.js';

const k = (o: Record<string, unknown>) => keyPE(Object.entries(o));
const v = (value: unknown) => ({ value });

test('path elements serialize as FieldsV1 keys and print as upstream paths', () => {
  assert.equal(serializePE(f('image')), 'f:image');
  assert.equal(serializePE(k({ protocol: 'TCP', containerPort: 80 })), 'k:{"containerPort":80,"protocol":"TCP"}');
  assert.equal(serializePE(v('a<b')), 'v:"a\\u003cb"');
  assert.equal(serializePE({ index: 3 }), 'i:3');
  for (const s of ['f:a.b', 'k:{"name":"x"}', 'v:42', 'v:true', 'i:0']) assert.equal(serializePE(parsePE(s)), s);
  assert.equal(serializePE(parsePE('k:{"protocol":"UDP","containerPort":53}')), 'k:{"containerPort":53,"protocol":"UDP"}');
  for (const bad of ['x', 'fx', 'z:1', 'k:[1]', 'v:{', 'i:a']) assert.throws(() => parsePE(bad), Error, bad);
  const p: Path = [f('spec'), f('containers'), k({ name: 'nginx' }), f('ports'), k({ containerPort: 80, protocol: 'TCP' }), f('name')];
  assert.equal(pathString(p), '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].name');
  assert.equal(pathString([f('metadata'), f('finalizers'), v('x'), ]), '.metadata.finalizers[="x"]');
});

test('FieldsV1 round trip: members, children, the "." self marker and upstream order', () => {
  const wire = {
    'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a"': {}, 'v:"b"': {} }, 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      'f:containers': {
        'k:{"name":"a"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } },
      },
      'f:replicas': {},
      'f:selector': {},
    },
  };
  const set = fromFieldsV1(wire);
  assert.ok(set.has([f('metadata'), f('labels')]));
  assert.ok(set.has([f('metadata'), f('labels'), f('app')]));
  assert.ok(!set.has([f('metadata')]));
  assert.ok(set.has([f('spec'), f('containers'), k({ name: 'a' })]));
  assert.ok(set.has([f('metadata'), f('finalizers'), v('b')]));
  assert.equal(JSON.stringify(toFieldsV1(set)), JSON.stringify(wire));
  // key order on the wire does not matter when parsing; output is sorted: fields, keys, values, indices
  const shuffled = fromFieldsV1({ 'i:1': {}, 'v:2': {}, 'k:{"b":1,"a":2}': {}, 'f:z': {}, 'f:a': {}, 'v:"s"': {}, 'v:1': {} });
  assert.deepEqual(Object.keys(toFieldsV1(shuffled)), ['f:a', 'f:z', 'k:{"a":2,"b":1}', 'v:1', 'v:2', 'v:"s"', 'i:1']);
  assert.throws(() => fromFieldsV1({ 'f:a': 1 }), Error);
  assert.throws(() => fromFieldsV1([]), Error);
});

test('field set algebra over nested maps, sets and keyed lists', () => {
  const c = (name: string, ...rest: Path) => [f('spec'), f('containers'), k({ name }), ...rest];
  const a = FieldSet.of([f('spec'), f('replicas')], c('x'), c('x', f('image')), [f('metadata'), f('labels'), f('l1')], [f('spec'), f('tags'), v('t1')]);
  const b = FieldSet.of(c('x', f('image')), c('y'), [f('metadata'), f('labels'), f('l2')], [f('spec'), f('tags'), v('t1')], [f('spec'), f('tags'), v('t2')]);
  const u = a.union(b);
  for (const p of [...a.paths(), ...b.paths()]) assert.ok(u.has(p), pathString(p));
  assert.equal(u.paths().length, 8);
  const i = a.intersection(b);
  assert.deepEqual(i.paths().map(pathString), ['.spec.tags[="t1"]', '.spec.containers[name="x"].image'].sort((x, y) => (x.length - y.length) || x.localeCompare(y)).reverse().sort());
  const d = a.difference(b);
  assert.deepEqual(d.paths().map(pathString).sort(), ['.metadata.labels.l1', '.spec.containers[name="x"]', '.spec.replicas'].sort());
  // a member of the other set does not remove what lies below it, unless the difference is recursive
  const owner = FieldSet.of(c('x'));
  assert.ok(a.difference(owner).has(c('x', f('image'))));
  assert.ok(!a.recursiveDifference(owner).has(c('x', f('image'))));
  assert.ok(!a.recursiveDifference(owner).has(c('x')));
  assert.ok(a.recursiveDifference(FieldSet.of([f('spec')])).equals(FieldSet.of([f('metadata'), f('labels'), f('l1')])));
  // emptiness and equality ignore how a set was built
  assert.ok(a.difference(a).isEmpty());
  assert.ok(new FieldSet().isEmpty());
  assert.ok(a.union(b).equals(b.union(a)));
  assert.ok(!a.equals(b));
  assert.ok(a.intersection(new FieldSet()).isEmpty());
  assert.ok(fromFieldsV1(toFieldsV1(u)).equals(u));
  // keyed lists with several keys compare by all of them
  const p80 = [f('ports'), k({ containerPort: 80, protocol: 'TCP' })];
  const p80u = [f('ports'), k({ protocol: 'UDP', containerPort: 80 })];
  assert.ok(!FieldSet.of(p80).intersection(FieldSet.of(p80u)).has(p80));
  assert.ok(FieldSet.of(p80).has([f('ports'), k({ protocol: 'TCP', containerPort: 80 })]));
});

test('sets that share the empty maps until their first insert never add to them', () => {
  const a = new FieldSet(), b = new FieldSet();
  a.insert([f('spec'), f('replicas')]);
  b.addMember(f('status'));
  b.childSet(f('metadata')).addMember(f('labels'));
  for (const s of [a.union(b), b.union(a), a.intersection(b), a.difference(b), b.recursiveDifference(a), new FieldSet().union(a), new FieldSet().addAll(b)]) assert.ok(s);
  FieldSet.from([f('x')], [[f('y'), a]]);
  const fresh = new FieldSet();
  assert.ok(fresh.isEmpty());
  assert.deepEqual(fresh.paths(), []);
  assert.equal(a.paths().length, 1);
  assert.equal(b.paths().length, 2);
  assert.ok(!a.has([f('status')]) && b.has([f('status')]));
});
