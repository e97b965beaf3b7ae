// Requests sent as one burst: a batch of GETs written, already encoded, to
// as many open TLS connections in one synchronous loop, and the answers read
// afterwards. A batch sent through node's https agent leaves the process a
// request at a time, each after its own turn of the client's event loop, and
// on a loaded machine the sender may be descheduled half way: the server then
// sees two groups a few milliseconds apart. This client's batch reaches the
// server's sockets within the time of the writes themselves.

import { connect, type TLSSocket } from 'node:tls';
import type { Credentials } from './child.js';

/** One HTTP/1.1 answer read off a socket: its status (the body is read and dropped). */
class AnswerReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting?: { resolve(status: number): void; reject(err: Error): void };

  constructor(socket: TLSSocket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
      this.tryFinish();
    });
    const fail = (err: Error) => { this.waiting?.reject(err); this.waiting = undefined; };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed before the answer')));
  }

  next(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.tryFinish();
    });
  }

  private tryFinish(): void {
    if (!this.waiting) return;
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buffered.subarray(0, end).toString('latin1');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let total: number | undefined;
    if (length) {
      total = end + 4 + Number(length[1]);
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      total = chunkedEnd(this.buffered, end + 4);
    } else {
      this.waiting.reject(new Error(`an answer without a length: ${head}`));
      this.waiting = undefined;
      return;
    }
    if (total === undefined || this.buffered.length < total) return;
    this.buffered = this.buffered.subarray(total);
    const { resolve } = this.waiting;
    this.waiting = undefined;
    resolve(status);
  }
}

/** Where a chunked body that starts at `at` ends, or undefined while it is incomplete. */
function chunkedEnd(buf: Buffer, at: number): number | undefined {
  for (;;) {
    const line = buf.indexOf('\r\n', at);
    if (line < 0) return undefined;
    const size = parseInt(buf.subarray(at, line).toString('latin1'), 16);
    const next = line + 2 + size + 2;
    if (size === 0) return next <= buf.length ? next : undefined; // no trailers are sent
    if (next > buf.length) return undefined;
    at = next;
  }
}

export class BurstClient {
  private constructor(private readonly sockets: TLSSocket[], private readonly readers: AnswerReader[], private readonly host: string) {}

  /** `size` TLS connections to the server with the admin certificate, open and ready. */
  static async open(port: number, creds: Credentials, size: number): Promise<BurstClient> {
    const sockets = await Promise.all(Array.from({ length: size }, () => new Promise<TLSSocket>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca: creds.ca, cert: creds.cert, key: creds.key, ALPNProtocols: ['http/1.1'] });
      socket.setNoDelay(true);
      socket.once('secureConnect', () => resolve(socket));
      socket.once('error', reject);
    })));
    return new BurstClient(sockets, sockets.map((s) => new AnswerReader(s)), `127.0.0.1:${port}`);
  }

  get size(): number {
    return this.sockets.length;
  }

  /** GETs `paths` (one per connection, at most `size`) written in one loop; their statuses once all are answered. */
  async getAll(paths: readonly string[]): Promise<number[]> {
    const requests = paths.map((p) => Buffer.from(`GET ${p} HTTP/1.1\r\nHost: ${this.host}\r\nAccept: application/json\r\n\r\n`, 'latin1'));
    const answers = requests.map((_, i) => this.readers[i]!.next());
    for (let i = 0; i < requests.length; i++) this.sockets[i]!.write(requests[i]!);
    return Promise.all(answers);
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
  }
}
