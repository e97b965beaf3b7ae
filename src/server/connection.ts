// Answers at the level of the HTTP connection, where Node's own parser would
// otherwise reply in plain text or not at all: malformed requests, headers
// over the limit, unknown Expect values and CONNECT. Clients get a Status
// object like every other failure.

import { ServerResponse, type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Server } from 'node:https';
import type { Duplex } from 'node:stream';
import { ApiError, errors } from '../machinery/errors.js';

/** Upstream's request header limit (Go's DefaultMaxHeaderBytes, 1 MiB); Node's default is 16 KiB. */
export const maxHeaderBytes = 1 << 20;

/** The Status a protocol error from Node's parser stands for. */
function protocolStatus(err: NodeJS.ErrnoException): ApiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, '', `request header fields too large: the limit is ${maxHeaderBytes} bytes`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, '', 'the request was not received in time');
    default:
      return errors.badRequest(`malformed HTTP request: ${err.code ?? 'parse error'}`);
  }
}

/**
 * Writes a Status as a whole HTTP response on a raw socket, then closes it
 * once the client has closed its side, or after a moment at most. What the
 * client is still sending (the rest of a header over the limit) is read and
 * dropped meanwhile, as Go's server lingers: a socket closed while bytes
 * still arrive answers them with a reset, which can reach the client before
 * it has read the answer, and the answer is lost.
 */
function writeRawStatus(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(err.toStatus());
  socket.write(
    `HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? 'Error'}\r\n`
    + 'Content-Type: application/json\r\n'
    + `Content-Length: ${Buffer.byteLength(body)}\r\n`
    + 'Connection: close\r\n\r\n'
    + body,
  );
  socket.once('end', () => socket.end());
  socket.resume();
  const linger = setTimeout(() => socket.destroy(), lingerMs);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/** Connections already answered with a protocol-level Status. */
const answeredAtProtocolLevel = new WeakSet<Duplex>();

/** How long a connection answered at the protocol level is read before it is closed (Go's rstAvoidanceDelay is 500 ms). */
const lingerMs = 500;

/**
 * Hooks the connection-level answers onto a server whose requests `app`
 * serves. CONNECT goes through `app` like any request (so it is
 * authenticated, and answered 405 where nothing serves it).
 */
/** The raw connection of a request that asked to switch protocols, for a handler that takes it over (the aggregator's proxy). */
export interface Upgrade {
  socket: Duplex;
  /** Bytes the client sent after its request head. */
  head: Buffer;
}

const upgrades = new WeakMap<IncomingMessage, Upgrade>();

/** The connection of an upgrade request, undefined for a plain one. */
export function upgradeOf(req: IncomingMessage): Upgrade | undefined {
  return upgrades.get(req);
}

export function handleConnectionLevel(server: Server, app: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or half-written request has nobody left to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) { socket.destroy(); return; }
    // The parser goes on failing on what the client still sends while the socket lingers: one answer.
    if (answeredAtProtocolLevel.has(socket)) return;
    answeredAtProtocolLevel.add(socket);
    writeRawStatus(socket, protocolStatus(err));
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const err = new ApiError(417, '', `unsupported Expect header: ${JSON.stringify(req.headers.expect ?? '')} (only 100-continue is understood)`);
    const body = JSON.stringify(err.toStatus());
    res.writeHead(417, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  });
  // CONNECT and upgrade requests go through the same filters and routes as any
  // other, answered on their connection; a handler may take an upgrade's
  // connection over instead (upgradeOf), and then nothing is answered here.
  const answerOnConnection = (req: IncomingMessage, socket: Duplex) => {
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0]);
    res.on('finish', () => { res.detachSocket(socket as Parameters<ServerResponse['detachSocket']>[0]); socket.end(); });
    app(req, res);
  };
  server.on('connect', (req: IncomingMessage, socket: Duplex) => answerOnConnection(req, socket));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrades.set(req, { socket, head });
    answerOnConnection(req, socket);
  });
}
