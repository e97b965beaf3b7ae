// The Service ranges without a server: addresses and ports of a range, the
// bands dynamic picks prefer, and two allocators on one store (as two servers
// on one etcd) never taking one value twice.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AllocationError, cidrRange, portRange, StoredRange } from '../../../src/registry/ranges.js';
import { MemoryBackend } from '../../../src/storage/memory.js';

test('a CIDR\'s usable addresses: no network address, no IPv4 broadcast, at most 2^16', () => {
  const v4 = cidrRange('10.0.0.0/24');
  assert.deepEqual([v4.family, v4.text, v4.size, v4.staticBand], ['IPv4', '10.0.0.0/24', 254, 16]);
  assert.equal(v4.valueAt(0), '10.0.0.1');
  assert.equal(v4.valueAt(253), '10.0.0.254');
  assert.equal(v4.offsetOf('10.0.0.0'), undefined);
  assert.equal(v4.offsetOf('10.0.0.255'), undefined);
  assert.equal(v4.offsetOf('10.0.1.1'), undefined);
  assert.equal(cidrRange('10.0.0.7/24').text, '10.0.0.0/24');
  const v6 = cidrRange('fd00:10:96::/112');
  assert.deepEqual([v6.family, v6.size], ['IPv6', 65535]);
  assert.equal(v6.valueAt(0), 'fd00:10:96::1');
  assert.equal(v6.offsetOf('fd00:10:96::ffff'), 65534);
  assert.equal(cidrRange('fd00::/64').size, 65536);
  assert.equal(cidrRange('10.96.0.0/28').staticBand, 0, 'small ranges have no static band');
  assert.throws(() => cidrRange('10.0.0.0/33'), /invalid CIDR/);
  assert.throws(() => cidrRange('10.0.0.1/32'), /no usable address/);
});

test('port ranges', () => {
  const ports = portRange('30000-32767');
  assert.deepEqual([ports.text, ports.size, ports.staticBand], ['30000-32767', 2768, 86]);
  assert.equal(ports.offsetOf(29999), undefined);
  assert.equal(ports.valueAt(2767), 32767);
  assert.throws(() => portRange('32767-30000'), /invalid port range/);
  assert.throws(() => portRange('0-10'), /invalid port range/);
});

test('dynamic picks take the upper band first; asked-for values are checked', async () => {
  const range = new StoredRange(new MemoryBackend(), '/registry/ranges/serviceips', cidrRange('10.0.0.0/24'), 'IP');
  for (let i = 0; i < 50; i++) {
    const ip = await range.allocateNext();
    assert.ok(Number(ip.split('.')[3]) > 16, ip);
  }
  await range.allocate('10.0.0.1');
  await assert.rejects(range.allocate('10.0.0.1'), (e: unknown) => e instanceof AllocationError && e.message === 'provided IP is already allocated');
  await assert.rejects(range.allocate('10.1.0.1'), { message: 'provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/24' });
  await range.release('10.0.0.1');
  await range.allocate('10.0.0.1');
});

test('two allocators on one store hand out every value once, then report the range full', async () => {
  const backend = new MemoryBackend();
  const a = new StoredRange(backend, '/registry/ranges/servicenodeports', portRange('30000-30099'), 'port');
  const b = new StoredRange(backend, '/registry/ranges/servicenodeports', portRange('30000-30099'), 'port');
  const got = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).allocateNext()));
  assert.equal(new Set(got).size, 100);
  await assert.rejects(a.allocateNext(), (e: unknown) => e instanceof AllocationError && e.full && e.message === 'range is full');
  await b.release(30042);
  assert.equal(await a.allocateNext(), 30042);
  // Marking what is in use never frees anything.
  await a.markInUse([30001]);
  await assert.rejects(b.allocate(30001), { message: 'provided port is already allocated' });
});
