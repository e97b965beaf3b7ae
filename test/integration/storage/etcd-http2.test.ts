// The etcd client's HTTP/2 connection against a real etcd: flow control both
// ways (our frames wait for etcd's window, etcd waits for ours). The rest of
// the HTTP/2 layer is in test/unit/storage/http2.test.ts.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { encodeHeaders } from '../../../src/storage/etcd/http2/hpack.js';
import { Http2Connection } from '../../../src/storage/etcd/http2/connection.js';
import { EtcdBackend } from '../../../src/storage/etcd/store.js';
import { startEtcd, EtcdCluster } from '../../support/etcd.js';

describe('an HTTP/2 connection to a real etcd', () => {
  let etcd: EtcdCluster;
  before(async () => { etcd = await startEtcd(1); });
  after(async () => { await etcd?.stop(); });

  test('a value far above etcd\'s window (64 KiB) goes out in frames of its size as its window opens, and comes back whole', async () => {
    const backend = new EtcdBackend({ endpoints: etcd.endpoints.split(','), requestTimeoutMs: 10_000 });
    try {
      const value = Buffer.alloc(1_500_000);
      for (let i = 0; i < value.length; i++) value[i] = (i * 7) % 251;
      await backend.create('/big/one', value);
      await backend.create('/big/two', value);
      assert.deepEqual((await backend.get('/big/one'))?.value, value);
      const listed = await backend.range('/big/');
      assert.deepEqual(listed.items.map((kv) => kv.value.equals(value)), [true, true]);
    } finally {
      await backend.close();
    }
  });

  test('small windows of our own: etcd waits for our WINDOW_UPDATEs and every byte arrives', async () => {
    const url = new URL(etcd.members[0]!.clientUrl);
    const socket = netConnect({ host: url.hostname, port: Number(url.port) });
    const connection = new Http2Connection(socket, { streamWindow: 65_535, connectionWindow: 65_535 });
    socket.once('connect', () => connection.markConnected());
    try {
      // A Range of everything (the two 1.5 MB values above) by hand: key "\0", range_end "\0".
      const request = Buffer.from([0x0a, 0x01, 0x00, 0x12, 0x01, 0x00]);
      const block = encodeHeaders([
        [':method', 'POST'], [':scheme', 'http'], [':path', '/etcdserverpb.KV/Range'], [':authority', url.host],
        ['content-type', 'application/grpc'], ['te', 'trailers'],
      ]);
      const answer = await new Promise<{ bytes: number; status?: string }>((resolve, reject) => {
        let bytes = 0;
        const stream = connection.request(block, {
          onHeaders: (fields, end) => {
            if (end) resolve({ bytes, status: fields.find(([n]) => n === 'grpc-status')?.[1] });
          },
          onData: (data) => { bytes += data.length; },
          onAbort: (abort) => reject(new Error(abort.message)),
        });
        const prefix = Buffer.from([0, 0, 0, 0, request.length]);
        stream.send([prefix, request], true);
      });
      assert.equal(answer.status, '0');
      assert.ok(answer.bytes > 3_000_000, `${answer.bytes} bytes`);
      // PING: answered.
      await new Promise<void>((resolve) => connection.ping(resolve));
    } finally {
      connection.close();
    }
  });
});
