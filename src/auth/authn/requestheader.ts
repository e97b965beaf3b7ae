// The authenticating proxy (request headers): a proxy in front of the server
// authenticates users itself and names them in headers. The headers are
// believed only on a connection whose client certificate chains to the
// proxy's CA (--requestheader-client-ca-file) and, when names are listed,
// whose CN is one of them; on any other connection they mean nothing. Once
// read, they are removed so nothing later mistakes them for the client's own.

import type { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ownValue, setOwn } from '../../machinery/ownkeys.js';
import type { UserInfo } from '../../machinery/user.js';
import type { Authenticator, AuthnResult } from './authenticator.js';
import { chainAnchoredIn, unknownAuthority, verifiedPeer } from './x509.js';

export interface RequestHeaderOptions {
  /** The proxy's CAs. */
  anchors: readonly X509Certificate[];
  /** CNs the proxy's certificate may have; empty: any. */
  allowedNames: readonly string[];
  /** Ordered: the first with a value names the user. */
  usernameHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

const lower = (names: readonly string[]) => names.map((n) => n.trim().toLowerCase()).filter((n) => n !== '');

/** An extra key as the proxy percent-encoded it; kept as sent when it is not valid encoding, as upstream. */
function decodeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'requestheader';
  private readonly usernameHeaders: string[];
  private readonly groupHeaders: string[];
  private readonly extraPrefixes: string[];
  private readonly allowedNames: Set<string>;
  /** Whether a connection is the proxy's never changes: decided once per socket. */
  private readonly bySocket = new WeakMap<TLSSocket, AuthnResult | undefined>();

  constructor(private readonly options: RequestHeaderOptions) {
    this.usernameHeaders = lower(options.usernameHeaders);
    this.groupHeaders = lower(options.groupHeaders);
    this.extraPrefixes = lower(options.extraHeaderPrefixes);
    this.allowedNames = new Set(options.allowedNames);
  }

  authenticate(req: IncomingMessage): AuthnResult {
    const socket = req.socket as TLSSocket;
    let refusal = this.bySocket.get(socket);
    if (!this.bySocket.has(socket)) {
      refusal = this.checkConnection(socket);
      this.bySocket.set(socket, refusal);
    }
    if (refusal) return refusal;
    const headers = req.headersDistinct;
    const username = this.usernameHeaders.map((h) => headers[h]?.find((v) => v !== '')).find((v) => v !== undefined);
    if (username === undefined) return { kind: 'none' };
    const groups = this.groupHeaders.flatMap((h) => (headers[h] ?? []).filter((v) => v !== ''));
    const extra: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(headers)) {
      const prefix = this.extraPrefixes.find((p) => name.startsWith(p));
      if (prefix === undefined || values === undefined) continue;
      const key = decodeExtraKey(name.slice(prefix.length));
      setOwn(extra, key, [...(ownValue(extra, key) ?? []), ...values]);
    }
    this.strip(req);
    const user: UserInfo = { username, groups };
    if (Object.keys(extra).length) user.extra = extra;
    return { kind: 'user', user };
  }

  /** Undefined for the proxy's connection; otherwise what to answer (no certificate: none, another one: rejected). */
  private checkConnection(socket: TLSSocket): AuthnResult | undefined {
    const peer = verifiedPeer(socket);
    if (peer === 'none') return { kind: 'none' };
    if ('error' in peer) return { kind: 'rejected', reason: peer.error };
    if (!chainAnchoredIn(socket, this.options.anchors)) return { kind: 'rejected', reason: unknownAuthority };
    if (this.allowedNames.size > 0 && !this.allowedNames.has(peer.cn ?? '')) {
      return { kind: 'rejected', reason: `x509: subject with cn=${peer.cn ?? ''} is not in the allowed list` };
    }
    return undefined;
  }

  private strip(req: IncomingMessage): void {
    const distinct = req.headersDistinct;
    for (const name of Object.keys(distinct)) {
      if (this.usernameHeaders.includes(name) || this.groupHeaders.includes(name) || this.extraPrefixes.some((p) => name.startsWith(p))) {
        delete req.headers[name];
        delete distinct[name];
      }
    }
  }
}
