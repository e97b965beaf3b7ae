// The ranges the server hands service addresses and node ports out of:
// addresses and CIDRs as Go prints them, upstream's range sizes and bands,
// the bitmap's picking order and snapshot format, and the stored range,
// whose compare-and-swap keeps concurrent writers (one SQLite store, two
// servers on one real etcd) from handing out one value twice.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { formatCIDR, formatIP, parseCIDR, parseIP } from '../../../src/machinery/ipnet.js';
import { AllocationBitmap } from '../../../src/registry/allocation/bitmap.js';
import { NodePortRange, ServiceIPRange } from '../../../src/registry/allocation/ranges.js';
import { AllocationError, StoredRange } from '../../../src/registry/allocation/stored.js';
import { openSqliteBackend } from '../../../src/storage/sqlite/store.js';
import { EtcdBackend } from '../../../src/storage/etcd/store.js';
import { startEtcd, type EtcdCluster } from '../../support/etcd.js';

test('addresses and CIDRs read and print as Go prints them', () => {
  const cases: [string, string][] = [
    ['10.0.0.1', '10.0.0.1'], ['::1', '::1'], ['::', '::'], ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:0:0:0:2:1', '2001:db8::2:1'], ['fd00:0:0:1::', 'fd00:0:0:1::'], ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['2001:db8::ffff:1.2.3.4', '2001:db8::ffff:102:304'], ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'], ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
  ];
  for (const [given, printed] of cases) assert.equal(formatIP(parseIP(given)!), printed, given);
  for (const bad of ['10.0.0', '10.0.0.256', '1::2::3', 'fe80::1%eth0', '[::1]', '', 'x']) assert.equal(parseIP(bad), undefined, bad);
  assert.equal(formatCIDR(parseCIDR('10.0.0.7/24')!), '10.0.0.0/24');
  assert.equal(formatCIDR(parseCIDR('fd00:10:96::5/112')!), 'fd00:10:96::/112');
  for (const bad of ['10.0.0.0', '10.0.0.0/33', '::/129', '10.0.0.0/x', '10.0.0.0/-1']) assert.equal(parseCIDR(bad), undefined, bad);
});

test('service IP ranges: upstream\'s sizes, bands and first and last addresses', () => {
  const v4 = ServiceIPRange.parse('10.0.0.0/24')!;
  assert.deepEqual([v4.size, v4.staticBand, v4.valueAt(0), v4.valueAt(v4.size - 1)], [254, 16, '10.0.0.1', '10.0.0.254']);
  assert.equal(v4.offsetOf('10.0.0.10'), 9);
  for (const outside of ['10.0.0.0', '10.0.0.255', '10.0.1.1', 'fd00::1', 'nonsense']) assert.equal(v4.offsetOf(outside), undefined, outside);
  assert.equal(v4.notInRange('10.0.1.1'), 'the provided IP (10.0.1.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24');
  assert.deepEqual([ServiceIPRange.parse('10.96.0.0/12')!.staticBand, ServiceIPRange.parse('10.0.0.0/28')!.staticBand, ServiceIPRange.parse('10.0.0.0/28')!.size], [256, 0, 14]);
  const v6 = ServiceIPRange.parse('fd00::/108')!;
  // IPv6 keeps its last address, loses the network address, and is capped at 65,536.
  assert.deepEqual([v6.size, v6.staticBand, v6.valueAt(0), v6.valueAt(v6.size - 1)], [65535, 256, 'fd00::1', 'fd00::ffff']);
  assert.equal(ServiceIPRange.parse('fd00::/112')!.size, 65535);
});

test('node port ranges parse as upstream\'s flag does', () => {
  const ports = NodePortRange.parse('30000-32767');
  assert.deepEqual([ports.base, ports.size, ports.staticBand, ports.text], [30000, 2768, 86, '30000-32767']);
  assert.equal(NodePortRange.parse('30000+9').text, '30000-30009');
  assert.equal(NodePortRange.parse(' 8080 ').text, '8080-8080');
  assert.equal(ports.notInRange(), 'provided port is not in the valid range. The range of valid ports is 30000-32767');
  assert.equal(ports.offsetOf(29999), undefined);
  assert.equal(ports.offsetOf(32767), 2767);
  assert.throws(() => NodePortRange.parse('30000-70000'), /cannot be greater than 65535/);
  assert.throws(() => NodePortRange.parse('32000-31000'), /end port cannot be less than start port/);
  assert.throws(() => NodePortRange.parse('a-b'), /unable to parse port range/);
});

test('the bitmap hands out the upper part first, then the static band, then nothing; its snapshot is upstream\'s integer', () => {
  const bitmap = new AllocationBitmap(40, 16);
  const order: number[] = [];
  for (let v = bitmap.allocateNext(); v !== undefined; v = bitmap.allocateNext()) order.push(v);
  assert.equal(order.length, 40);
  assert.ok(order.slice(0, 24).every((v) => v >= 16), 'the 24 values above the band come first');
  assert.ok(order.slice(24).every((v) => v < 16));
  assert.equal(new Set(order).size, 40);
  const small = new AllocationBitmap(16);
  small.allocate(0);
  small.allocate(9);
  assert.deepEqual([...small.snapshot()], [0x02, 0x01]);
  const copy = new AllocationBitmap(16);
  copy.restore(small.snapshot());
  assert.deepEqual([copy.has(0), copy.has(9), copy.has(1), copy.used], [true, true, false, 2]);
  assert.equal(copy.allocate(9), false);
  copy.release(9);
  assert.equal(copy.used, 1);
});

const scratch: string[] = [];
after(() => { for (const d of scratch) rmSync(d, { recursive: true, force: true }); });

describe('a stored range', () => {
  test('on SQLite: values taken by number and at random, refused in upstream\'s words, given back, never twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plat-alloc-'));
    scratch.push(dir);
    const backend = openSqliteBackend(join(dir, 'store.db'));
    try {
      const ips = new StoredRange(backend, '/registry/ranges/serviceips', ServiceIPRange.parse('10.0.0.0/27')!, 'IP');
      await ips.allocate('10.0.0.10');
      await assert.rejects(ips.allocate('10.0.0.10'), (e: AllocationError) => e.reason === 'allocated' && e.message === 'provided IP is already allocated');
      await assert.rejects(ips.allocate('10.0.0.31'), (e: AllocationError) => e.reason === 'notInRange' && /valid IPs is 10.0.0.0\/27/.test(e.message));
      // Every one of the 29 others, concurrently: each once.
      const got = await Promise.all(Array.from({ length: 29 }, () => ips.allocateNext()));
      assert.equal(new Set([...got, '10.0.0.10']).size, 30);
      await assert.rejects(ips.allocateNext(), (e: AllocationError) => e.reason === 'full' && e.message === 'range is full');
      await ips.release('10.0.0.10');
      await ips.release('10.0.0.10'); // twice is no change
      assert.equal(await ips.allocateNext(), '10.0.0.10');
      // The stored object is upstream's RangeAllocation.
      const stored = JSON.parse((await backend.get('/registry/ranges/serviceips'))!.value.toString());
      assert.deepEqual([stored.kind, stored.apiVersion, stored.range], ['RangeAllocation', 'v1', '10.0.0.0/27']);
      assert.equal((await ips.read()).bitmap.used, 30);
      // A range stored for another CIDR is not used as if it were this one's.
      const other = new StoredRange(backend, '/registry/ranges/serviceips', ServiceIPRange.parse('10.0.1.0/27')!, 'IP');
      await assert.rejects(other.allocateNext(), /is not the configured 10.0.1.0\/27/);
      assert.equal((await other.read()).bitmap.used, 0);
    } finally {
      await backend.close();
    }
  });

  test('changes asked for at once are written together, each answered on its own: a refusal undoes nobody else\'s value', async () => {
    const { MemoryBackend } = await import('../../../src/storage/memory/store.js');
    const backend = new MemoryBackend();
    let writes = 0;
    const counted = Object.assign(Object.create(backend) as typeof backend, {
      create: (...a: Parameters<typeof backend.create>) => { writes++; return backend.create(...a); },
      update: (...a: Parameters<typeof backend.update>) => { writes++; return backend.update(...a); },
    });
    const ports = new StoredRange(counted, '/registry/ranges/servicenodeports', NodePortRange.parse('30000-30009'), 'port');
    const asked = [
      ports.allocate(30005), ports.allocate(30005), ports.allocate(40000),
      ...Array.from({ length: 10 }, () => ports.allocateNext()), ports.release(30007),
    ];
    const settled = await Promise.allSettled(asked);
    const reasons = settled.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as AllocationError).reason));
    // The second 30005 is refused, 40000 is outside, and the tenth dynamic port finds the range full (ten ports, one fixed).
    assert.deepEqual(reasons, ['ok', 'allocated', 'notInRange', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'full', 'ok']);
    const taken = settled.slice(3, 12).map((r) => (r as PromiseFulfilledResult<number>).value);
    assert.equal(new Set([...taken, 30005]).size, 10);
    assert.ok(writes <= 2, `${writes} writes of the bitmap for 14 changes asked at once`);
    // The release came after the others in its batch: 30007, taken by then, is free again.
    assert.ok(taken.includes(30007));
    assert.equal((await ports.read()).bitmap.used, 9);
    await backend.close();
  });

  describe('on one etcd shared by two servers', () => {
    let etcd: EtcdCluster;
    const open: EtcdBackend[] = [];
    before(async () => { etcd = await startEtcd(1); });
    after(async () => {
      for (const b of open) await b.close();
      await etcd.stop();
    });

    test('200 concurrent node ports from two stores are all different', async () => {
      const stores = [0, 1].map(() => {
        const b = new EtcdBackend({ endpoints: etcd.endpoints.split(','), requestTimeoutMs: 10_000 });
        open.push(b);
        return new StoredRange(b, '/registry/ranges/servicenodeports', NodePortRange.parse('30000-32767'), 'port');
      });
      const ports = await Promise.all(Array.from({ length: 200 }, (_, i) => stores[i % 2]!.allocateNext()));
      assert.equal(new Set(ports).size, 200);
      assert.ok(ports.every((p) => p >= 30000 + 86 && p <= 32767), 'dynamic ports come from above the static band');
      assert.equal((await stores[1]!.read()).bitmap.used, 200);
      await assert.rejects(stores[0]!.allocate(ports[7]!), (e: AllocationError) => e.reason === 'allocated' && e.message === 'provided port is already allocated');
    });
  });
});

test('a repair marks what objects hold, gives back what nobody held for three repairs, and rebuilds a range stored for another span', async () => {
  const { MemoryBackend } = await import('../../../src/storage/memory/store.js');
  const { RangeRepair } = await import('../../../src/registry/allocation/repair.js');
  const backend = new MemoryBackend();
  const ips = new StoredRange(backend, '/registry/ranges/serviceips', ServiceIPRange.parse('10.0.0.0/24')!, 'IP');
  let held = ['10.0.0.10', '10.0.0.11'];
  const repair = new RangeRepair(ips, async () => held);
  await ips.allocate('10.0.0.10');
  await ips.allocate('10.0.0.99'); // taken by a create that never stored its object
  const first = await repair.runOnce();
  assert.deepEqual([first.notMarked, first.released], [['10.0.0.11'], []]);
  const marked = async () => { const r = await ips.read(); const out: string[] = []; r.bitmap.forEach((o) => out.push(ips.range.valueAt(o))); return out; };
  assert.deepEqual(await marked(), ['10.0.0.10', '10.0.0.11', '10.0.0.99']);
  assert.deepEqual((await repair.runOnce()).released, []);
  assert.deepEqual((await repair.runOnce()).released, ['10.0.0.99'], 'the third repair in a row that finds it unheld gives it back');
  assert.deepEqual(await marked(), ['10.0.0.10', '10.0.0.11']);
  held = ['10.0.0.10', '10.0.0.10', '10.1.0.1'];
  const odd = await repair.runOnce();
  assert.deepEqual([odd.heldTwice, odd.outOfRange], [['10.0.0.10'], ['10.1.0.1']]);
  // The flag changed: the range is rebuilt for the new span from the objects alone.
  const wider = new StoredRange(backend, '/registry/ranges/serviceips', ServiceIPRange.parse('10.0.0.0/16')!, 'IP');
  held = ['10.0.0.10', '10.0.200.1'];
  const rebuilt = await new RangeRepair(wider, async () => held).runOnce();
  assert.deepEqual(rebuilt.notMarked, ['10.0.0.10', '10.0.200.1']);
  assert.equal((await wider.read()).storedRange, '10.0.0.0/16');
  assert.equal((await wider.read()).bitmap.used, 2);
});
