// The etcd client's HTTP/2 layer (src/storage/http2): HPACK against the
// examples of RFC 7541 Appendix C, the Huffman code against Appendix B,
// framing, and a connection against a real node:http2 server (GOAWAY,
// RST_STREAM, trailers-only answers, PING). Against a real etcd (flow control
// both ways): test/integration/storage/etcd-http2.test.ts.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect, createServer, type AddressInfo } from 'node:net';
import { createServer as createH2Server, constants, type Http2Server, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { decodeHuffman, huffmanCode } from '../../../src/storage/etcd/http2/huffman.js';
import { encodeHeaders, HeaderField, HpackDecoder, withLiteralField } from '../../../src/storage/etcd/http2/hpack.js';
import { ErrorCode, Flag, Frame, FrameError, frameHeader, FrameReader, FrameType, unpadded } from '../../../src/storage/etcd/http2/frames.js';
import { Http2Connection } from '../../../src/storage/etcd/http2/connection.js';
import { EtcdBackend } from '../../../src/storage/etcd/store.js';
import { EtcdGrpc } from '../../../src/storage/etcd/grpc.js';
import { failureKind } from '../../../src/storage/etcd/client.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('HPACK (RFC 7541)', () => {
  test('the Huffman code is Appendix B\'s (a code of each length, and the ends)', () => {
    const table: [number, number, number][] = [
      [0, 0x1ff8, 13], [1, 0x7fffd8, 23], [9, 0xffffea, 24], [10, 0x3ffffffc, 30], [22, 0x3ffffffe, 30], [32, 0x14, 6],
      [48, 0x0, 5], [58, 0x5c, 7], [38, 0xf8, 8], [33, 0x3f8, 10], [39, 0x7fa, 11], [35, 0xffa, 12], [94, 0x3ffc, 14],
      [60, 0x7ffc, 15], [92, 0x7fff0, 19], [128, 0xfffe6, 20], [153, 0x1fffdc, 21], [129, 0x3fffd2, 22],
      [199, 0x1ffffec, 25], [192, 0x3ffffe0, 26], [203, 0x7ffffde, 27], [127, 0xffffffc, 28], [249, 0xffffffe, 28],
      [254, 0x7fffff0, 27], [255, 0x3ffffee, 26], [256, 0x3fffffff, 30],
    ];
    for (const [symbol, code, length] of table) assert.deepEqual(huffmanCode(symbol), { code, length }, `symbol ${symbol}`);
  });

  test('Huffman strings decode; EOS, long padding and padding with zeros are refused', () => {
    assert.equal(decodeHuffman(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff')), 'www.example.com');
    assert.equal(decodeHuffman(hex('a8eb 1064 9cbf')), 'no-cache');
    assert.equal(decodeHuffman(Buffer.alloc(0)), '');
    assert.throws(() => decodeHuffman(hex('ffff ffff')), /EOS/); // 30 ones: EOS
    assert.throws(() => decodeHuffman(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff ff')), /padding/); // 8 bits of padding
    assert.throws(() => decodeHuffman(hex('00')), /padding/); // '0' (00000) then 000: padding not all ones
  });

  // Each sequence shares one decoder: later blocks refer to the entries earlier ones added.
  const sequences: { name: string; tableSize: number; blocks: { input: string; output: HeaderField[]; table: [string, string][]; size: number }[] }[] = [
    {
      name: 'C.3, requests without Huffman coding', tableSize: 4096, blocks: [
        {
          input: '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
          output: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']],
          table: [[':authority', 'www.example.com']], size: 57,
        },
        {
          input: '8286 84be 5808 6e6f 2d63 6163 6865',
          output: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com'], ['cache-control', 'no-cache']],
          table: [['cache-control', 'no-cache'], [':authority', 'www.example.com']], size: 110,
        },
        {
          input: '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
          output: [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']],
          table: [['custom-key', 'custom-value'], ['cache-control', 'no-cache'], [':authority', 'www.example.com']], size: 164,
        },
      ],
    },
    {
      name: 'C.4, requests with Huffman coding', tableSize: 4096, blocks: [
        {
          input: '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
          output: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']],
          table: [[':authority', 'www.example.com']], size: 57,
        },
        {
          input: '8286 84be 5886 a8eb 1064 9cbf',
          output: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com'], ['cache-control', 'no-cache']],
          table: [['cache-control', 'no-cache'], [':authority', 'www.example.com']], size: 110,
        },
        {
          input: '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
          output: [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']],
          table: [['custom-key', 'custom-value'], ['cache-control', 'no-cache'], [':authority', 'www.example.com']], size: 164,
        },
      ],
    },
  ];
  const responses = (input: [string, string, string]) => [
    {
      input: input[0],
      output: [[':status', '302'], ['cache-control', 'private'], ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'], ['location', 'https://www.example.com']] as HeaderField[],
      table: [['location', 'https://www.example.com'], ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'], ['cache-control', 'private'], [':status', '302']] as [string, string][],
      size: 222,
    },
    {
      input: input[1],
      output: [[':status', '307'], ['cache-control', 'private'], ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'], ['location', 'https://www.example.com']] as HeaderField[],
      // :status 307 did not fit beside the four: the oldest (:status 302) went.
      table: [[':status', '307'], ['location', 'https://www.example.com'], ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'], ['cache-control', 'private']] as [string, string][],
      size: 222,
    },
    {
      input: input[2],
      output: [
        [':status', '200'], ['cache-control', 'private'], ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'], ['location', 'https://www.example.com'],
        ['content-encoding', 'gzip'], ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
      ] as HeaderField[],
      table: [['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'], ['content-encoding', 'gzip'], ['date', 'Mon, 21 Oct 2013 20:13:22 GMT']] as [string, string][],
      size: 215,
    },
  ];
  sequences.push(
    {
      name: 'C.5, responses without Huffman coding (a 256-byte table: entries evicted)', tableSize: 256, blocks: responses([
        '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
        '4803 3330 37c1 c0bf',
        '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31',
      ]),
    },
    {
      name: 'C.6, responses with Huffman coding (a 256-byte table: entries evicted)', tableSize: 256, blocks: responses([
        '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
        '4883 640e ffc1 c0bf',
        '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
      ]),
    },
  );
  for (const sequence of sequences) {
    test(`Appendix ${sequence.name}`, () => {
      const decoder = new HpackDecoder(sequence.tableSize);
      for (const [i, block] of sequence.blocks.entries()) {
        assert.deepEqual(decoder.decode(hex(block.input)), block.output, `block ${i + 1}`);
        assert.deepEqual(decoder.table.entries, block.table, `block ${i + 1}: the dynamic table`);
        assert.equal(decoder.table.size, block.size, `block ${i + 1}: the table's size`);
      }
    });
  }

  test('integers of Appendix C.1 (10 and 1337 with a 5-bit prefix, 42 with 8 bits) as a table size update and an index', () => {
    const decoder = new HpackDecoder(4096);
    decoder.decode(hex('3f 9a 0a')); // size update to 1337: 001 11111, then 1337 - 31 = 1306 in 7-bit groups
    decoder.decode(hex('40 01 61 01 62')); // a: b, added
    assert.deepEqual(decoder.table.entries, [['a', 'b']]);
    decoder.decode(hex('2a')); // size update to 10: everything goes
    assert.deepEqual(decoder.table, { entries: [], size: 0 });
    assert.throws(() => decoder.decode(hex('3f e2 1f')), /table size of 4097/); // above what we allow
    assert.throws(() => decoder.decode(hex('82 20')), /after a header field/);
    assert.throws(() => decoder.decode(hex('be')), /past the table/);
    assert.throws(() => decoder.decode(hex('80')), /index 0/);
    assert.throws(() => decoder.decode(hex('04 05 61')), /truncated/);
  });

  test('a request\'s header block: static references and literals without indexing, which any decoder reads back', () => {
    const fields: HeaderField[] = [
      [':method', 'POST'], [':scheme', 'http'], [':path', '/etcdserverpb.KV/Range'], [':authority', '127.0.0.1:2379'],
      ['content-type', 'application/grpc'], ['te', 'trailers'], ['grpc-timeout', '59999m'],
    ];
    const block = encodeHeaders(fields);
    assert.equal(block[0], 0x83, ':method POST is static entry 3');
    const decoder = new HpackDecoder();
    assert.deepEqual(decoder.decode(block), fields);
    assert.deepEqual(decoder.decode(withLiteralField(block, 'grpc-timeout', '5m')), [...fields, ['grpc-timeout', '5m']]);
    assert.deepEqual(decoder.table.entries, [], 'nothing added to the peer\'s table');
  });
});

describe('HTTP/2 framing', () => {
  test('frames are cut from bytes however they arrive; padding and priority fields are removed', () => {
    const frames: Frame[] = [];
    const reader = new FrameReader((f) => frames.push({ ...f, payload: Buffer.from(f.payload) }));
    const padded = Buffer.concat([frameHeader(8, FrameType.data, Flag.padded | Flag.endStream, 3), Buffer.from([3]), Buffer.from('abcd'), Buffer.alloc(3)]);
    const headers = Buffer.concat([frameHeader(7, FrameType.headers, Flag.priority | Flag.endHeaders, 5), Buffer.alloc(5), Buffer.from([0x88, 0x82])]);
    const ping = Buffer.concat([frameHeader(8, FrameType.ping, 0, 0), Buffer.from('12345678')]);
    const all = Buffer.concat([padded, headers, ping]);
    for (let i = 0; i < all.length; i += 4) reader.push(all.subarray(i, i + 4));
    assert.deepEqual(frames.map((f) => [f.type, f.flags, f.streamId]), [[0, 9, 3], [1, 0x24, 5], [6, 0, 0]]);
    assert.equal(unpadded(frames[0]!).toString(), 'abcd');
    assert.deepEqual([...unpadded(frames[1]!)], [0x88, 0x82]);
    assert.throws(() => unpadded({ type: FrameType.data, flags: Flag.padded, streamId: 1, payload: Buffer.from([5, 0]) }), /padding/);
    assert.throws(() => new FrameReader(() => undefined).push(frameHeader(16_385, FrameType.data, 0, 1)),
      (err: FrameError) => err.code === ErrorCode.frameSizeError);
  });
});

describe('an HTTP/2 connection to a node:http2 server', () => {
  let server: Http2Server;
  let port = 0;
  let onStream: (stream: ServerHttp2Stream, headers: Record<string, unknown>) => void = () => undefined;
  before(async () => {
    server = createH2Server();
    server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined); // the resets the tests make
      onStream(stream, headers);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  // Not waited for: node's server waits for its sessions, which our client leaves to close on their own.
  after(() => { server.close(); });

  const grpcClient = () => new EtcdGrpc([`http://127.0.0.1:${port}`], undefined);
  const range = (client: EtcdGrpc) => client.range({ key: Buffer.from('k') }, Date.now() + 5_000);

  test('a trailers-only answer: grpc-status and grpc-message (percent-encoded) in the response headers', async () => {
    onStream = (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '9', 'grpc-message': 'etcdserver%3A%20no%20leader' }, { endStream: true });
    };
    const client = grpcClient();
    try {
      await assert.rejects(range(client), (err: Error) => err.message === '9 FAILED_PRECONDITION: etcdserver: no leader');
    } finally {
      client.close();
    }
  });

  test('RST_STREAM ends the call as a dropped connection; REFUSED_STREAM and GOAWAY above the last stream as refused (safe to send again)', async () => {
    const client = grpcClient();
    try {
      onStream = (stream) => stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      const reset = await range(client).catch((err: Error) => err);
      assert.match(String(reset), /^Error: 14 UNAVAILABLE: Connection dropped: stream reset by the server with code 2 \(INTERNAL_ERROR\)/);
      assert.equal(failureKind(reset), 'ambiguous');

      onStream = (stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM);
      const refused = await range(client).catch((err: Error) => err);
      assert.match(String(refused), /14 UNAVAILABLE: Stream refused by server/);
      assert.equal(failureKind(refused), 'unsent');

      // A new connection whose server says at once that it processes none of its streams.
      client.close();
      const goingAway = grpcClient();
      const atOnce = (session: ServerHttp2Session) => session.goaway(constants.NGHTTP2_NO_ERROR, 0);
      server.once('session', atOnce);
      const goaway = await range(goingAway).catch((err: Error) => err);
      goingAway.close();
      assert.match(String(goaway), /14 UNAVAILABLE: Stream refused by server: GOAWAY with code 0 \(NO_ERROR\)/);
      assert.equal(failureKind(goaway), 'unsent');

      // A call on a connection that works is answered.
      onStream = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        // An empty RangeResponse.
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
      };
      const answering = grpcClient();
      assert.deepEqual((await range(answering)).kvs, []);
      answering.close();
    } finally {
      client.close();
    }
  });

  test('a call past its deadline fails as DEADLINE_EXCEEDED and its stream is cancelled', async () => {
    let cancelled: Promise<number> | undefined;
    onStream = (stream) => {
      cancelled = new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)));
    };
    const client = grpcClient();
    try {
      await assert.rejects(client.range({ key: Buffer.from('k') }, Date.now() + 200), /^Error: 4 DEADLINE_EXCEEDED: Deadline exceeded$/);
      assert.equal(await cancelled, constants.NGHTTP2_CANCEL);
    } finally {
      client.close();
    }
  });

  test('a message announced above the receive bound (2^31 - 1 bytes) fails the call at once, before its bytes are gathered', async () => {
    let cancelled: Promise<number> | undefined;
    onStream = (stream) => {
      cancelled = new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)));
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write(Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3])); // 4 GiB - 1 announced, 3 bytes sent
    };
    const client = grpcClient();
    try {
      const err = await client.range({ key: Buffer.from('k') }, Date.now() + 3_000).catch((e: Error) => e);
      assert.equal(String(err), 'Error: 8 RESOURCE_EXHAUSTED: grpc: received message larger than max (4294967295 vs. 2147483647)');
      assert.equal(await cancelled, constants.NGHTTP2_CANCEL);
    } finally {
      client.close();
    }
  });

  test('a refused connection: the call fails as never sent', async () => {
    const client = new EtcdGrpc(['http://127.0.0.1:1'], undefined);
    try {
      const err = await range(client).catch((e: Error) => e);
      assert.match(String(err), /14 UNAVAILABLE: No connection established: connect ECONNREFUSED/);
      assert.equal(failureKind(err), 'unsent');
    } finally {
      client.close();
    }
  });
});

describe('an HTTP/2 connection to a peer that never ends its header block', () => {
  test('an endless run of CONTINUATION frames fails the connection once the block passes its bound', async () => {
    const capBytes = 8 * 1024 * 1024; // where the fake server would give up and end the block (a client without a bound reads it all)
    let sent = 0;
    let gaveUp = false;
    const server = createServer((socket) => {
      socket.on('error', () => undefined); // the client closes on us
      let closed = false;
      socket.on('close', () => { closed = true; });
      socket.write(frameHeader(0, FrameType.settings, 0, 0));
      // Each CONTINUATION payload is a full frame of ":method: GET" (static index 2), a valid block however long.
      const payload = Buffer.alloc(16_384, 0x82);
      const continuation = (last: boolean, streamId: number) => Buffer.concat([frameHeader(payload.length, FrameType.continuation, last ? Flag.endHeaders : 0, streamId), payload]);
      const pour = (streamId: number) => {
        while (!closed) {
          const last = sent + payload.length >= capBytes;
          sent += payload.length;
          if (last) gaveUp = true;
          const more = socket.write(continuation(last, streamId));
          if (last) return void socket.end();
          if (!more) return void socket.once('drain', () => pour(streamId));
        }
      };
      let preface = true;
      const reader = new FrameReader((frame) => {
        if (frame.type !== FrameType.headers || sent > 0) return;
        socket.write(Buffer.concat([frameHeader(1, FrameType.headers, 0, frame.streamId), Buffer.from([0x88])])); // ":status: 200", no END_HEADERS
        pour(frame.streamId);
      });
      socket.on('data', (chunk: Buffer) => {
        if (preface) {
          preface = false;
          chunk = chunk.subarray(24); // the client's preface comes in its first write
        }
        reader.push(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new EtcdGrpc([`http://127.0.0.1:${(server.address() as AddressInfo).port}`], undefined);
    try {
      const err = await client.range({ key: Buffer.from('k') }, Date.now() + 10_000).catch((e: Error) => e);
      assert.match(String(err), /14 UNAVAILABLE: Connection dropped: a header block of more than 65536 bytes/);
      assert.equal(gaveUp, false, 'the client closed the connection before the server ended the block');
    } finally {
      client.close();
      server.close();
    }
  });
});

describe('an HTTP/2 connection to a peer that asks without reading', () => {
  test('a flood of PINGs whose answers go unread fails the connection with ENHANCE_YOUR_CALM', async () => {
    const capFrames = 2_000_000; // where the fake server would stop (a client without a bound answers them all)
    let sent = 0;
    let stopped: (why: string) => void = () => undefined;
    const serverStopped = new Promise<string>((resolve) => { stopped = resolve; });
    const server = createServer((socket) => {
      socket.on('error', () => undefined); // the client closes on us
      socket.pause(); // our answers are never read
      let closed = false;
      socket.on('close', () => { closed = true; });
      const burst = Buffer.concat(Array.from({ length: 1_000 }, (_, i) => Buffer.concat([frameHeader(8, FrameType.ping, 0, 0), Buffer.alloc(8, i)])));
      const pour = () => {
        while (!closed && sent < capFrames) {
          sent += 1_000;
          if (!socket.write(burst)) return void socket.once('drain', pour);
        }
        if (!closed) stopped(`the server sent its ${capFrames} PINGs and the connection stayed open`);
      };
      socket.write(frameHeader(0, FrameType.settings, 0, 0));
      pour();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = netConnect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
    try {
      const closedWith = await Promise.race([serverStopped, new Promise<Error | undefined>((resolve) => {
        const connection = new Http2Connection(socket, { onClose: resolve });
        socket.once('connect', () => connection.markConnected());
      })]);
      assert.match(String(closedWith), /more than 10000 PING and SETTINGS frames to answer while our answers go unread/);
      assert.ok(sent < capFrames, 'the client closed the connection before the server stopped');
    } finally {
      socket.destroy();
      server.close();
    }
  });
});
