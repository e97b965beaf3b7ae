// The authenticator interface and their union: the first that recognises the
// request's credentials decides; a credential that is presented but wrong
// stops the request (401) instead of falling through to anonymous.

import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../machinery/user.js';
import { anonymousUser, sharedUser, systemGroups } from '../../machinery/user.js';
import { audiencesAccepted, formatList } from './audiences.js';
import { andThen, type MaybePromise } from '../../machinery/maybe-async.js';

export type AuthnResult =
  /** `audiences`: those the credential is valid for, when its authenticator knows (tokens). */
  | { kind: 'user'; user: UserInfo; audiences?: string[] }
  /** Credentials of this method were presented but are invalid. */
  | { kind: 'rejected'; reason: string }
  /** No credentials of this method. */
  | { kind: 'none' };

export interface Authenticator {
  readonly name: string;
  authenticate(req: IncomingMessage): MaybePromise<AuthnResult>;
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

type Answer = { kind: 'user' } | { kind: 'rejected'; reason: string } | { kind: 'none' };

/**
 * Asks `ask(0)`, `ask(1)`… in turn until one accepts, and answers that one
 * (undefined when none does; the rejections' reasons are added to
 * `reasons`). Without a promise while each answers at once.
 */
export function firstAccepting<R extends Answer>(count: number, ask: (i: number) => MaybePromise<R>, reasons: string[], from = 0): MaybePromise<Extract<R, { kind: 'user' }> | undefined> {
  for (let i = from; i < count; i++) {
    const r = ask(i);
    if (r instanceof Promise) {
      const after = i + 1;
      return r.then((settled) => (isAccepted(settled, reasons) ? settled : firstAccepting(count, ask, reasons, after)));
    }
    if (isAccepted(r, reasons)) return r;
  }
  return undefined;
}

function isAccepted<R extends Answer>(r: R, reasons: string[]): r is Extract<R, { kind: 'user' }> {
  if (r.kind === 'rejected') reasons.push(r.reason);
  return r.kind === 'user';
}

export class UnionAuthenticator {
  constructor(private readonly authenticators: Authenticator[], private readonly options: UnionOptions) {}

  /** Without a promise while each authenticator asked answers at once (a certificate, a token verified before). */
  authenticate(req: IncomingMessage): MaybePromise<AuthnResult> {
    const reasons: string[] = [];
    return andThen(firstAccepting(this.authenticators.length, (i) => this.authenticators[i]!.authenticate(req), reasons), (r) => {
      if (r) return this.accepted(r);
      if (reasons.length) return { kind: 'rejected', reason: joinReasons(reasons) };
      return this.options.anonymous ? { kind: 'user', user: anonymousUser } : { kind: 'none' };
    });
  }

  private accepted(r: Extract<AuthnResult, { kind: 'user' }>): AuthnResult {
    const apiAudiences = this.options.apiAudiences ?? [];
    if (!audiencesAccepted(apiAudiences, r.audiences)) {
      return { kind: 'rejected', reason: `unable to match the audience: ${formatList(r.audiences ?? [])} , accepted: ${formatList(apiAudiences)}` };
    }
    return { ...r, user: withAuthenticatedGroup(r.user) };
  }
}
