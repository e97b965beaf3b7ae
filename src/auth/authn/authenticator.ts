// The authenticator interface and their union: the first that recognises the
// request's credentials decides; a credential that is presented but wrong
// stops the request (401) instead of falling through to anonymous.

import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../machinery/user.js';
import { anonymousUser, systemGroups } from '../../machinery/user.js';

export type AuthnResult =
  | { kind: 'user'; user: UserInfo }
  /** Credentials of this method were presented but are invalid. */
  | { kind: 'rejected'; reason: string }
  /** No credentials of this method. */
  | { kind: 'none' };

export interface Authenticator {
  readonly name: string;
  authenticate(req: IncomingMessage): Promise<AuthnResult> | AuthnResult;
}

export interface UnionOptions {
  anonymous: boolean;
}

/** Adds system:authenticated as upstream does, to every user not already in it or in system:unauthenticated. */
function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.username === anonymousUser.username) return user;
  if (user.groups.includes(systemGroups.authenticated) || user.groups.includes(systemGroups.unauthenticated)) return user;
  return { ...user, groups: [...user.groups, systemGroups.authenticated] };
}

export class UnionAuthenticator {
  constructor(private readonly authenticators: Authenticator[], private readonly options: UnionOptions) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    let rejected: AuthnResult | undefined;
    for (const a of this.authenticators) {
      const r = await a.authenticate(req);
      if (r.kind === 'user') return { kind: 'user', user: withAuthenticatedGroup(r.user) };
      if (r.kind === 'rejected') rejected ??= r;
    }
    if (rejected) return rejected;
    if (this.options.anonymous) return { kind: 'user', user: anonymousUser };
    return { kind: 'none' };
  }
}
