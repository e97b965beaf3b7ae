// The authenticator interface and their union: the first that recognises the
// request's credentials decides; a credential that is presented but wrong
// stops the request (401) instead of falling through to anonymous.

import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../machinery/user.js';
import { anonymousUser, sharedUser, systemGroups } from '../../machinery/user.js';
import { audiencesAccepted, formatList } from './audiences.js';

export type AuthnResult =
  /** `audiences`: those the credential is valid for, when its authenticator knows (tokens). */
  | { kind: 'user'; user: UserInfo; audiences?: string[] }
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
  /** The server's own audiences: a credential valid only for others is refused. Empty: any. */
  apiAudiences?: readonly string[];
}

/**
 * Adds system:authenticated, as upstream does for every authenticated user,
 * unless the user is anonymous or already names one of the two groups.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.username === anonymousUser.username) return user;
  if (user.groups.includes(systemGroups.authenticated) || user.groups.includes(systemGroups.unauthenticated)) return user;
  // Authenticators hand out one user object per connection or cached token:
  // one completed object each, so that what is derived from it once (the
  // audit's user JSON) stays derived.
  let completed = completedUsers.get(user);
  if (completed === undefined) completedUsers.set(user, (completed = sharedUser({ ...user, groups: [...user.groups, systemGroups.authenticated] })));
  return completed;
}

const completedUsers = new WeakMap<UserInfo, UserInfo>();

/** Joins the reasons of several rejections the way upstream's error aggregate prints them. */
export function joinReasons(reasons: readonly string[]): string {
  const unique = [...new Set(reasons)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

export class UnionAuthenticator {
  constructor(private readonly authenticators: Authenticator[], private readonly options: UnionOptions) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const reasons: string[] = [];
    for (const a of this.authenticators) {
      const r = await a.authenticate(req);
      if (r.kind === 'user') return this.accepted(r);
      if (r.kind === 'rejected') reasons.push(r.reason);
    }
    if (reasons.length) return { kind: 'rejected', reason: joinReasons(reasons) };
    if (this.options.anonymous) return { kind: 'user', user: anonymousUser };
    return { kind: 'none' };
  }

  private accepted(r: Extract<AuthnResult, { kind: 'user' }>): AuthnResult {
    const apiAudiences = this.options.apiAudiences ?? [];
    if (!audiencesAccepted(apiAudiences, r.audiences)) {
      return { kind: 'rejected', reason: `unable to match the audience: ${formatList(r.audiences ?? [])} , accepted: ${formatList(apiAudiences)}` };
    }
    return { ...r, user: withAuthenticatedGroup(r.user) };
  }
}
