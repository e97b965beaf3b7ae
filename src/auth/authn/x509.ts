// Client-certificate authentication: the TLS layer verified the chain against
// the client CA (the server requests but does not require a certificate);
// the subject's CN is the user name and each O a group.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Authenticator, AuthnResult } from './authenticator.js';

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  /** A connection's certificate never changes: read it once per socket (getPeerCertificate is costly). */
  private readonly bySocket = new WeakMap<TLSSocket, AuthnResult>();

  authenticate(req: IncomingMessage): AuthnResult {
    const socket = req.socket as TLSSocket;
    let result = this.bySocket.get(socket);
    if (!result) {
      result = this.fromSocket(socket);
      this.bySocket.set(socket, result);
    }
    return result;
  }

  private fromSocket(socket: TLSSocket): AuthnResult {
    if (typeof socket.getPeerCertificate !== 'function') return { kind: 'none' };
    const cert = socket.getPeerCertificate();
    if (!cert || Object.keys(cert).length === 0) return { kind: 'none' };
    if (!socket.authorized) {
      return { kind: 'rejected', reason: `verifying certificate failed: ${String(socket.authorizationError ?? 'unknown authority')}` };
    }
    const cn = cert.subject?.CN;
    const username = Array.isArray(cn) ? cn[0] : cn;
    // A verified certificate naming nobody is no credential for a user: no opinion, as upstream.
    if (!username) return { kind: 'none' };
    const o = cert.subject?.O;
    const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
    return { kind: 'user', user: { username, groups } };
  }
}
