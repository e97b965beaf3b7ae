// The HTTPS listener: TLS that asks for client certificates (verified per
// request by the x509 authenticator, so a request without one is still
// answered), node's header limit, upstream's keep-alive, and the address the
// server ends up on, which is known only once it listens (port 0 picks one).

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleConnectionLevel, maxHeaderBytes } from './connection.js';

export interface ListenerTls {
  keyPem: string;
  certPem: string;
  /** The CAs whose client certificates are asked for. */
  clientCaPem: string;
}

type App = (req: IncomingMessage, res: ServerResponse) => void;

export class HttpsListener {
  private listening?: { server: Server; port: number; address: string };

  constructor(private readonly tls: ListenerTls) {}

  async listen(app: App, port: number, bindAddress: string): Promise<void> {
    const server = createServer({
      key: this.tls.keyPem,
      cert: this.tls.certPem,
      ca: this.tls.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false, // verified per request by the x509 authenticator
      maxHeaderSize: maxHeaderBytes,
    }, app);
    server.keepAliveTimeout = 65_000;
    handleConnectionLevel(server, app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, bindAddress, () => { server.off('error', reject); resolve(); });
    });
    const bound = (server.address() as AddressInfo).port;
    // Bound to every address: clients on this host reach it on the loopback one.
    const host = bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
    this.listening = { server, port: bound, address: host.includes(':') ? `[${host}]:${bound}` : `${host}:${bound}` };
  }

  /** The node server, once listening (the graceful drain closes it itself). */
  get server(): Server {
    return this.bound().server;
  }

  get port(): number {
    return this.bound().port;
  }

  /** host:port as clients reach it; empty before the server listens. */
  get address(): string {
    return this.listening?.address ?? '';
  }

  get url(): string {
    return `https://${this.bound().address}`;
  }

  /** Stops listening and ends every connection. */
  async close(): Promise<void> {
    const server = this.listening?.server;
    if (!server) return;
    // After a graceful drain the listener is closed already, and a second close would never call back.
    if (server.listening) await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
    else server.closeAllConnections();
  }

  private bound(): { server: Server; port: number; address: string } {
    if (!this.listening) throw new Error('the server does not listen yet');
    return this.listening;
  }
}
