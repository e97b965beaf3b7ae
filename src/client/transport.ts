// How bytes reach a server a ClientConfig names: TLS with its CA (or none
// when insecure-skip-tls-verify), its server name, the client certificate,
// and through its proxy-url: an http or https proxy by CONNECT, or socks5.

import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { ClientConfig } from './kubeconfig.js';

export interface TlsMaterial {
  certPem?: string;
  keyPem?: string;
}

type ConnectCallback = (err: Error | null, socket?: Duplex) => void;

/** Opens a TCP (or TLS, for an https proxy) connection to the proxy itself. */
function openProxy(proxy: URL, caPem: string | undefined): Promise<Socket> {
  const port = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : proxy.protocol === 'socks5:' ? 1080 : 80);
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const socket: Socket = proxy.protocol === 'https:'
      ? tlsConnect({ host, port, servername: isIP(host) ? undefined : host, ...(caPem ? { ca: caPem } : {}) }, () => resolve(socket))
      : netConnect({ host, port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Reads from `socket` until `done` says the answer is complete; what follows it stays unread. */
function readAnswer(socket: Socket, done: (buf: Buffer) => number | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      let end: number | undefined;
      try {
        end = done(buf);
      } catch (e) {
        cleanup();
        reject(e);
        return;
      }
      if (end === undefined) return;
      cleanup();
      if (end < buf.length) socket.unshift(buf.subarray(end));
      resolve(buf.subarray(0, end));
    };
    const onEnd = () => {
      cleanup();
      reject(new Error('the proxy closed the connection'));
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onError);
  });
}

async function httpConnect(socket: Socket, proxy: URL, host: string, port: number): Promise<void> {
  const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  let head = `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n`;
  if (proxy.username) head += `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n`;
  socket.write(`${head}\r\n`);
  const answer = await readAnswer(socket, (buf) => {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0 && buf.length > 16 * 1024) throw new Error('the proxy\'s answer to CONNECT is too long');
    return end < 0 ? undefined : end + 4;
  });
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer.toString('latin1'));
  if (!status || status[1] !== '200') throw new Error(`the proxy refused CONNECT ${target}: ${answer.toString('latin1').split('\r\n')[0]}`);
}

/** A SOCKS5 CONNECT (RFC 1928), with user/password authentication (RFC 1929) when the proxy URL carries one. */
async function socks5Connect(socket: Socket, proxy: URL, host: string, port: number): Promise<void> {
  const user = decodeURIComponent(proxy.username);
  const password = decodeURIComponent(proxy.password);
  socket.write(Buffer.from(user ? [5, 2, 0, 2] : [5, 1, 0]));
  const method = await readAnswer(socket, (b) => (b.length >= 2 ? 2 : undefined));
  if (method[0] !== 5) throw new Error('the proxy does not speak SOCKS5');
  if (method[1] === 2) {
    const u = Buffer.from(user);
    const p = Buffer.from(password);
    if (u.length > 255 || p.length > 255) throw new Error('SOCKS5 user name and password are limited to 255 bytes');
    socket.write(Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]));
    const auth = await readAnswer(socket, (b) => (b.length >= 2 ? 2 : undefined));
    if (auth[1] !== 0) throw new Error('the SOCKS5 proxy refused the user name and password');
  } else if (method[1] !== 0) throw new Error('the SOCKS5 proxy accepts none of the offered authentication methods');
  const ipKind = isIP(host);
  let address: Buffer;
  if (ipKind === 4) address = Buffer.from([1, ...host.split('.').map(Number)]);
  else if (ipKind === 6) {
    const groups = expandIpv6(host);
    address = Buffer.alloc(17);
    address[0] = 4;
    groups.forEach((g, i) => address.writeUInt16BE(g, 1 + i * 2));
  } else {
    const name = Buffer.from(host);
    if (name.length > 255) throw new Error('host name too long for SOCKS5');
    address = Buffer.concat([Buffer.from([3, name.length]), name]);
  }
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), address, portBytes]));
  await readAnswer(socket, (b) => {
    if (b.length < 5) return undefined;
    if (b[1] !== 0) throw new Error(`the SOCKS5 proxy could not connect (reply ${b[1]})`);
    const len = b[3] === 1 ? 4 : b[3] === 4 ? 16 : b[3] === 3 ? 1 + b[4]! : -1;
    if (len < 0) throw new Error('the SOCKS5 proxy answered with an unknown address type');
    return b.length >= 4 + len + 2 ? 4 + len + 2 : undefined;
  });
}

function expandIpv6(host: string): number[] {
  const [head, tail] = host.includes('::') ? host.split('::') as [string, string] : [host, undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const a = parse(head);
  const b = parse(tail);
  return [...a, ...new Array(8 - a.length - b.length).fill(0), ...b];
}

/** A tunnel to `host:port` through the proxy `proxyUrl`. */
export async function proxyTunnel(proxyUrl: string, host: string, port: number, proxyCaPem?: string): Promise<Socket> {
  const proxy = new URL(proxyUrl);
  const socket = await openProxy(proxy, proxyCaPem);
  try {
    if (proxy.protocol === 'socks5:') await socks5Connect(socket, proxy, host, port);
    else await httpConnect(socket, proxy, host, port);
  } catch (e) {
    socket.destroy();
    throw e;
  }
  return socket;
}

/** An agent for `config`'s server with `tls` as the client certificate (exec plugins change it; a change means a new agent, so a new handshake). */
export function agentFor(config: ClientConfig, tls: TlsMaterial): HttpAgent | HttpsAgent {
  const https = new URL(config.server).protocol === 'https:';
  const options: AgentOptions = { keepAlive: true, maxSockets: 64 };
  if (https) {
    if (config.caPem !== undefined) options.ca = config.caPem;
    if (tls.certPem !== undefined && tls.keyPem !== undefined) {
      options.cert = tls.certPem;
      options.key = tls.keyPem;
    }
    if (config.insecureSkipTlsVerify) options.rejectUnauthorized = false;
    if (config.tlsServerName) options.servername = config.tlsServerName;
  }
  if (!config.proxyUrl) return https ? new HttpsAgent(options) : new HttpAgent(options);
  const proxyUrl = config.proxyUrl;
  const tunnel = (opts: { host?: string | null; hostname?: string | null; port?: number | string | null }, cb: ConnectCallback, wrap: (s: Socket) => Duplex) => {
    const host = (opts.hostname || opts.host || 'localhost').replace(/^\[|\]$/g, '');
    const port = Number(opts.port) || (https ? 443 : 80);
    proxyTunnel(proxyUrl, host, port, config.caPem).then((s) => cb(null, wrap(s)), (e: Error) => cb(e));
    return undefined;
  };
  if (!https) {
    const agent = new HttpAgent(options);
    (agent as unknown as { createConnection: unknown }).createConnection = (opts: ConnectionOptions, cb: ConnectCallback) => tunnel(opts, cb, (s) => s);
    return agent;
  }
  const agent = new HttpsAgent(options);
  (agent as unknown as { createConnection: unknown }).createConnection = (opts: ConnectionOptions, cb: ConnectCallback) =>
    tunnel(opts, cb, (socket) => tlsConnect({ ...opts, socket, servername: opts.servername ?? (isIP(opts.host ?? '') ? undefined : opts.host) }));
  return agent;
}
