// The REST objects of authentication/v1, which store nothing: the token
// request sub-resource of service accounts, TokenReview and SelfSubjectReview.

import { randomUUID } from 'node:crypto';
import { errors, fieldErrors } from '../machinery/errors.js';
import { ownValue } from '../machinery/ownkeys.js';
import { rfc3339Now } from '../machinery/time.js';
import type { UserInfo } from '../machinery/user.js';
import { productApiVersionForUpstream, vocabulary } from '../machinery/vocabulary.js';
import { boundTokenClaims, type ObjectRef, type TokenSigner } from '../machinery/serviceaccount.js';
import { apiVersionOf, type KindDefinition, type KubeObject } from '../api/kind.js';
import { UpstreamName } from '../api/codec.js';
import { selfSubjectReviews, tokenRequests, tokenReviews } from '../api/authentication/v1/index.js';
import { defaultTokenSeconds } from '../api/authentication/v1/tokenrequest.js';
import { createSubresource, reviewResource, type RestObject } from './rest.js';
import type { Registry } from './registry.js';

/**
 * Typed upstream clients (kubectl create token, kubectl auth whoami) send
 * `authentication.k8s.io/v1` and decode the answer only in the version they
 * sent: accept it as ours and answer in it.
 */
function answersInClientVersion(kind: KindDefinition, rest: RestObject): RestObject {
  const create = rest.create!;
  const ours = apiVersionOf(kind);
  return {
    ...rest,
    create: async (path, body, opts, scope) => {
      const value = body.value;
      const sent = typeof value === 'object' && value !== null ? (value as KubeObject).apiVersion : undefined;
      if (typeof sent !== 'string' || productApiVersionForUpstream(sent) !== ours) return create(path, body, opts, scope);
      const name = new UpstreamName(sent, ours);
      return name.answerAsTheirs(await create(path, { ...body, value: name.bodyAsOurs(value) }, opts, scope));
    },
  };
}

/** Lifetime extension of upstream's safe transition: pod-bound tokens of exactly this lifetime (what admission asks for)... */
export const warnOnlyTokenSeconds = 3607;
/** ...stay valid a year, and only warn after the lifetime asked for. */
export const extendedTokenSeconds = 365 * 24 * 3600;

export interface TokenLifetime {
  /** Seconds the token is valid for (its exp). */
  seconds: number;
  /** The lifetime the answer reports (expirationTimestamp), when shortened: the warning to send. */
  reported: number;
  warning?: string;
  /** Seconds after which use only warns (extended tokens). */
  warnAfter?: number;
}

/** The lifetime a token request gets: capped by the maximum, or extended for pod-bound tokens as upstream. */
export function tokenLifetime(requested: number, o: { maxSeconds: number; extend: boolean; podBound: boolean; forApiOnly: boolean }): TokenLifetime {
  let reported = requested;
  let warning: string | undefined;
  if (o.maxSeconds > 0 && requested > o.maxSeconds) {
    warning = `requested expiration of ${requested} seconds shortened to ${o.maxSeconds} seconds`;
    reported = o.maxSeconds;
  }
  if (o.extend && o.podBound && reported === warnOnlyTokenSeconds && o.forApiOnly) {
    return { seconds: Math.max(extendedTokenSeconds, o.maxSeconds), reported, warning, warnAfter: reported };
  }
  return { seconds: reported, reported, warning };
}

export interface TokenIssuing {
  signer: TokenSigner;
  apiAudiences: readonly string[];
  /** 0: no cap. */
  maxExpirationSeconds: number;
  extendExpiration: boolean;
  now?: () => number;
}

/** Kinds a token may be bound to, by kind in the core group, and the resource that holds them. */
const bindable: Record<string, string> = { Secret: 'secrets', Pod: 'pods' };

/** `serviceaccounts/{name}/token`: a bound token for the account, as upstream's TokenRequest. */
export function tokenRequestRest(registry: Registry, issuing: TokenIssuing): RestObject {
  const accounts = registry.store('', 'v1', 'serviceaccounts');
  if (!accounts) throw new Error('the catalog declares no serviceaccounts kind');
  const now = issuing.now ?? Date.now;
  const invalid = (name: string, field: string, value: unknown, detail: string) =>
    errors.invalid(tokenRequests.group, tokenRequests.kind, name, [fieldErrors.invalid(field, value, detail)]);

  const rest = createSubresource(accounts, 'token', tokenRequests, async (account, request, scope) => {
    const name: string = account.metadata!.name;
    const namespace: string = account.metadata!.namespace;
    const meta = request.metadata!;
    if (meta.name && meta.name !== name) throw invalid(name, 'metadata.name', meta.name, 'must match the service account name if specified');
    if (meta.namespace && meta.namespace !== namespace) throw invalid(name, 'metadata.namespace', meta.namespace, 'must match the service account namespace if specified');
    const spec = (request.spec ??= {});
    if (!Array.isArray(spec.audiences) || spec.audiences.length === 0) spec.audiences = [...issuing.apiAudiences];
    spec.expirationSeconds ??= defaultTokenSeconds;
    const issuedAt = now();
    const out: KubeObject = { ...request, metadata: { ...meta, name, namespace, creationTimestamp: rfc3339Now(new Date(issuedAt)) } };

    let secret: ObjectRef | undefined;
    let pod: ObjectRef | undefined;
    const ref = spec.boundObjectRef;
    if (ref) {
      const [group, version] = String(ref.apiVersion ?? '').includes('/') ? String(ref.apiVersion).split('/') : ['', String(ref.apiVersion ?? '')];
      const resource = group === '' ? ownValue(bindable, ref.kind) : undefined;
      const store = resource ? registry.store('', 'v1', resource) : undefined;
      if (!store) throw errors.badRequest(`cannot bind token for serviceaccount "${name}" to object of type ${group}/${version}, Kind=${ref.kind ?? ''}`);
      if (!ref.name) throw errors.invalid(tokenRequests.group, tokenRequests.kind, name, [fieldErrors.required('spec.boundObjectRef.name')]);
      const bound = await store.get(namespace, ref.name);
      if (ref.kind === 'Pod' && bound.spec?.serviceAccountName !== name) {
        throw errors.badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`);
      }
      const uid: string = bound.metadata?.uid ?? '';
      if (ref.uid && ref.uid !== uid) {
        throw errors.conflict({ group, resource: ref.kind }, ref.name, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
      }
      if (ref.kind === 'Pod') pod = { name: ref.name, uid };
      else secret = { name: ref.name, uid };
    }

    const audiences: string[] = spec.audiences;
    const lifetime = tokenLifetime(spec.expirationSeconds, {
      maxSeconds: issuing.maxExpirationSeconds, extend: issuing.extendExpiration, podBound: pod !== undefined,
      forApiOnly: audiences.every((a) => issuing.apiAudiences.includes(a)),
    });
    if (lifetime.warning) scope.warnings.push(lifetime.warning);
    spec.expirationSeconds = lifetime.reported;
    const token = await issuing.signer.sign(boundTokenClaims({
      namespace, account: { name, uid: account.metadata!.uid }, audiences, lifetimeSeconds: lifetime.seconds,
      now: issuedAt, id: randomUUID(), secret, pod, warnAfterSeconds: lifetime.warnAfter,
    }));
    out.status = { token, expirationTimestamp: rfc3339Now(new Date(issuedAt + lifetime.reported * 1000)) };
    return out;
  });
  return answersInClientVersion(tokenRequests, rest);
}

/** A user as UserInfo of authentication/v1: empty fields left out, as upstream serialises it. */
export function userInfoOf(user: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: user.username };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) out.extra = user.extra;
  return out;
}

/** What reviewing a token tells: its user and the audiences it is valid for, or why it is not. */
export type TokenReviewAnswer = { user: UserInfo; audiences?: string[] } | { error: string };

export type TokenReviewer = (token: string, audiences: readonly string[]) => Promise<TokenReviewAnswer>;

/** TokenReview: is this token valid, for whom, and for which of the asked audiences. */
export function tokenReviewRest(review: TokenReviewer, apiAudiences: readonly string[]): RestObject {
  return answersInClientVersion(tokenReviews, reviewResource(tokenReviews, async (r) => {
    const token = r.spec?.token;
    if (typeof token !== 'string' || token === '') {
      throw errors.badRequest(`token is required for TokenReview in ${vocabulary.authenticationGroup}/v1`);
    }
    const asked: string[] = Array.isArray(r.spec.audiences) && r.spec.audiences.length ? r.spec.audiences : [...apiAudiences];
    const answer = await review(token, asked);
    if ('error' in answer) return { authenticated: false, user: {}, error: answer.error };
    const audiences = answer.audiences ?? [];
    // An authenticator that answers for none of the asked audiences is broken, not the caller.
    if (asked.length && !audiences.some((a) => asked.includes(a))) throw errors.internal('error validating audiences');
    return { authenticated: true, user: userInfoOf(answer.user), audiences };
  }));
}

/** SelfSubjectReview: the caller's own user. */
export function selfSubjectReviewRest(): RestObject {
  return answersInClientVersion(selfSubjectReviews, reviewResource(selfSubjectReviews, (review, user) => {
    if (!user) throw errors.badRequest('no user present on request');
    review.metadata!.creationTimestamp = rfc3339Now();
    return { userInfo: userInfoOf(user) };
  }));
}

/** The REST objects of authentication/v1, to add to the registry. */
export function authenticationRests(registry: Registry, issuing: TokenIssuing, review: TokenReviewer): RestObject[] {
  return [tokenRequestRest(registry, issuing), tokenReviewRest(review, issuing.apiAudiences), selfSubjectReviewRest()];
}
