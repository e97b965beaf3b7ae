// Client-certificate authentication: the TLS layer verified the chain against
// the CAs it trusts (the server requests but does not require a certificate);
// the subject's CN is the user name and each O a group. When the TLS layer
// also trusts other CAs (the authenticating proxy's), a chain must end in one
// of the client CAs to name a user.

import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { Authenticator, AuthnResult } from './authenticator.js';

/**
 * Whether the peer's chain, as the TLS layer completed it, reaches one of
 * `anchors`: a certificate of the chain is an anchor, or an anchor issued and
 * signed it. The TLS layer checked validity and usage already.
 */
export function chainAnchoredIn(socket: TLSSocket, anchors: readonly X509Certificate[]): boolean {
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<DetailedPeerCertificate>();
  while (cert?.raw && !seen.has(cert)) {
    seen.add(cert);
    const x = new X509Certificate(cert.raw);
    for (const a of anchors) {
      if (x.raw.equals(a.raw) || (x.checkIssued(a) && x.verify(a.publicKey))) return true;
    }
    cert = cert.issuerCertificate;
  }
  return false;
}

/** The TLS socket's verified peer certificate, or why there is none: 'none' when no certificate was presented. */
export function verifiedPeer(socket: TLSSocket): { cn?: string; organizations: string[] } | 'none' | { error: string } {
  if (typeof socket.getPeerCertificate !== 'function') return 'none';
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return 'none';
  if (!socket.authorized) return { error: `verifying certificate failed: ${String(socket.authorizationError ?? 'unknown authority')}` };
  const cn = cert.subject?.CN;
  const o = cert.subject?.O;
  return { cn: Array.isArray(cn) ? cn[0] : cn, organizations: o === undefined ? [] : Array.isArray(o) ? o : [o] };
}

export const unknownAuthority = 'verifying certificate failed: certificate signed by unknown authority';

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  /** A connection's certificate never changes: read it once per socket (getPeerCertificate is costly). */
  private readonly bySocket = new WeakMap<TLSSocket, AuthnResult>();

  /** `anchors`: the client CAs, when the TLS layer trusts more CAs than those. */
  constructor(private readonly anchors?: readonly X509Certificate[]) {}

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
    const peer = verifiedPeer(socket);
    if (peer === 'none') return { kind: 'none' };
    if ('error' in peer) return { kind: 'rejected', reason: peer.error };
    if (this.anchors && !chainAnchoredIn(socket, this.anchors)) return { kind: 'rejected', reason: unknownAuthority };
    // A verified certificate naming nobody is no credential for a user: no opinion, as upstream.
    if (!peer.cn) return { kind: 'none' };
    return { kind: 'user', user: { username: peer.cn, groups: peer.organizations } };
  }
}
