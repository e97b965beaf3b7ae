// Webhook token authentication: a token no other authenticator knows is sent
// in a TokenReview (v1beta1 by default, or v1) to a remote service named by a
// kubeconfig file, which answers in `status`. Authenticated answers name the
// user; a denial with an error text is passed on, one without is no opinion
// (the request then gets the generic 401). Answers (either way) are cached
// for the cache TTL by token and audiences; failures and error texts are not,
// as upstream. A webhook that hangs or fails costs a request its timeout at
// most, and a 401.

import { Agent } from 'node:https';
import type { RemoteEndpoint } from '../../machinery/endpoint.js';
import { vocabulary, wrongAnswerKind } from '../../machinery/vocabulary.js';
import { ownValue, setOwn } from '../../machinery/ownkeys.js';
import type { UserInfo } from '../../machinery/user.js';
import { sharedUser } from '../../machinery/user.js';
import { postReview } from '../remotejson.js';
import { intersect } from './audiences.js';
import { VerifiedTokenCache } from './tokencache.js';
import { TokenFacts, type TokenAuthenticator, type TokenResult } from './token.js';

export interface WebhookTokenOptions {
  endpoint: RemoteEndpoint;
  version: 'v1' | 'v1beta1';
  /** How long an answer is kept, in ms; 0: not at all. */
  cacheTtlMs: number;
  timeoutMs: number;
  /** The server's own audiences: those of an answer that names none. */
  apiAudiences: readonly string[];
  now?: () => number;
  cacheSize?: number;
}

/** What a webhook said of a token, as kept in the cache. */
type Answer = { kind: 'user'; user: UserInfo; audiences: string[] } | { kind: 'none' };

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * The answer a TokenReview (at `apiVersion`) gives in its status; a string is
 * an error (the webhook's own text, or what is wrong with its answer).
 */
export function answerOf(review: unknown, apiVersion: string): Answer | string {
  const wrongKind = wrongAnswerKind(review, apiVersion, 'TokenReview');
  if (wrongKind) return `the webhook's answer is not a TokenReview: ${wrongKind}`;
  const status = ownValue(review as Record<string, unknown>, 'status');
  if (typeof status !== 'object' || status === null || Array.isArray(status)) return 'the webhook answered no TokenReview status';
  const s = status as Record<string, unknown>;
  if (s.authenticated !== true) {
    // Without a text of its own the token is simply not known: the generic Unauthorized.
    return typeof s.error === 'string' && s.error !== '' ? s.error : { kind: 'none' };
  }
  const u = typeof s.user === 'object' && s.user !== null ? s.user as Record<string, unknown> : {};
  if (typeof u.username !== 'string' || u.username === '') return 'the webhook authenticated the token but named no user';
  const user: UserInfo = { username: u.username, groups: [] };
  if (u.uid !== undefined && u.uid !== null) {
    if (typeof u.uid !== 'string') return 'the webhook\'s user uid is not a string';
    if (u.uid) user.uid = u.uid;
  }
  if (u.groups !== undefined && u.groups !== null) {
    if (!isStrings(u.groups)) return 'the webhook\'s user groups are not a list of strings';
    user.groups = [...u.groups];
  }
  if (u.extra !== undefined && u.extra !== null) {
    if (typeof u.extra !== 'object' || Array.isArray(u.extra)) return 'the webhook\'s user extra is not a map';
    const extra: Record<string, string[]> = {};
    for (const [key, values] of Object.entries(u.extra)) {
      if (!isStrings(values)) return `the webhook's user extra ${JSON.stringify(key)} is not a list of strings`;
      setOwn(extra, key, [...values]);
    }
    if (Object.keys(extra).length) user.extra = extra;
  }
  let audiences: string[] = [];
  if (s.audiences !== undefined && s.audiences !== null) {
    if (!isStrings(s.audiences)) return 'the webhook\'s audiences are not a list of strings';
    audiences = [...s.audiences];
  }
  return { kind: 'user', user: sharedUser(user), audiences };
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly cache: VerifiedTokenCache<Answer>;
  /** Reviews under way, so that a burst of requests with one token asks once. */
  private readonly pending = new Map<string, Promise<Answer | string>>();
  private readonly agent: Agent;
  private readonly now: () => number;

  constructor(private readonly o: WebhookTokenOptions) {
    this.cache = new VerifiedTokenCache(o.cacheSize);
    this.now = o.now ?? Date.now;
    const e = o.endpoint;
    this.agent = new Agent({ keepAlive: true, ca: e.caPem, cert: e.certPem, key: e.keyPem, rejectUnauthorized: !e.insecureSkipTlsVerify });
  }

  async authenticateToken(token: string, audiences: readonly string[], facts = new TokenFacts(token)): Promise<TokenResult> {
    // One answer per token and audiences asked for.
    const key = audiences.length ? `${facts.hash} ${JSON.stringify(audiences)}` : facts.hash;
    let answer: Answer | string | undefined = this.cache.get(key, this.now());
    if (!answer) {
      let pending = this.pending.get(key);
      if (!pending) {
        pending = this.ask(token, audiences, key).finally(() => this.pending.delete(key));
        this.pending.set(key, pending);
      }
      answer = await pending;
    }
    if (typeof answer === 'string') return { kind: 'rejected', reason: answer };
    if (answer.kind === 'none') return answer;
    // Frozen when answered: requests with the token share one user object, which nobody can change.
    const user = answer.user;
    if (audiences.length === 0) return { kind: 'user', user, audiences: [] };
    // An answer naming no audiences is valid for this server's own.
    const shared = intersect(audiences, answer.audiences.length ? answer.audiences : this.o.apiAudiences);
    if (shared.length === 0) return { kind: 'none' };
    return { kind: 'user', user, audiences: shared };
  }

  private async ask(token: string, audiences: readonly string[], key: string): Promise<Answer | string> {
    const spec: Record<string, unknown> = { token };
    if (audiences.length) spec.audiences = [...audiences];
    const apiVersion = `${vocabulary.authenticationGroup}/${this.o.version}`;
    let answer: Answer | string;
    try {
      answer = answerOf(await postReview(this.o.endpoint, { apiVersion, kind: 'TokenReview', spec }, this.o.timeoutMs, this.agent), apiVersion);
    } catch (e) {
      return `webhook: ${(e as Error).message}`;
    }
    if (typeof answer !== 'string' && this.o.cacheTtlMs > 0) this.cache.set(key, answer, this.now() + this.o.cacheTtlMs);
    return answer;
  }
}
