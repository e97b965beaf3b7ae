// The webhook authorizer: POSTs a SubjectAccessReview (v1beta1 or v1) to a
// remote service and reads `allowed`, `denied`, `reason` and
// `evaluationError` from its status. Answers are cached by request (allowed
// ones longer than others); a webhook that fails, answers garbage or is slower
// than its timeout counts as no opinion, with the failure as evaluation error.

import { noOpinion, type Attributes, type Decision, type RuleSet } from '../../machinery/authorization.js';
import { vocabulary, wrongAnswerKind } from '../../machinery/vocabulary.js';
import { ownValue } from '../../machinery/ownkeys.js';
import { BoundedMap } from '../../machinery/boundedmap.js';
import type { UserInfo } from '../../machinery/user.js';
import type { Authorizer } from './authorizer.js';
import type { RemoteEndpoint } from '../../machinery/endpoint.js';
import { postReview } from '../remotejson.js';


export interface WebhookAuthorizerOptions {
  endpoint: RemoteEndpoint;
  version: 'v1' | 'v1beta1';
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  timeoutMs: number;
  now?: () => number;
  /** Where a failed call (or an answer that is no SubjectAccessReview) is reported; the request sees no opinion. */
  log?: (message: string, extra: object) => void;
}

/** Entries kept at most, as upstream's cache; the oldest go first. */
const cacheSize = 8192;

type Json = Record<string, unknown>;

/** The spec of the SubjectAccessReview for a request (v1beta1 calls the groups `group`). */
export function reviewSpec(a: Attributes, version: 'v1' | 'v1beta1'): Json {
  const spec: Json = { user: a.user.username };
  if (a.user.groups.length) spec[version === 'v1' ? 'groups' : 'group'] = [...a.user.groups];
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
  if (a.isResourceRequest) {
    const r: Json = { verb: a.verb, group: a.apiGroup, version: a.apiVersion, resource: a.resource ?? '' };
    if (a.namespace) r.namespace = a.namespace;
    if (a.subresource) r.subresource = a.subresource;
    if (a.name) r.name = a.name;
    spec.resourceAttributes = r;
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  return spec;
}

/** The decision a webhook's answer (a SubjectAccessReview at `apiVersion`) says; throws when it says nothing usable. */
export function decisionOf(answer: unknown, apiVersion: string): Decision {
  const wrongKind = wrongAnswerKind(answer, apiVersion, 'SubjectAccessReview');
  if (wrongKind) throw new Error(`the webhook's answer is not a SubjectAccessReview: ${wrongKind}`);
  const status = ownValue(answer as Json, 'status');
  if (typeof status !== 'object' || status === null || Array.isArray(status)) throw new Error('the webhook answered no SubjectAccessReview status');
  const s = status as Json;
  const reason = typeof s.reason === 'string' ? s.reason : '';
  const evaluationError = typeof s.evaluationError === 'string' && s.evaluationError ? s.evaluationError : undefined;
  const withError = (d: Decision): Decision => (evaluationError ? { ...d, evaluationError } : d);
  if (s.allowed === true && s.denied === true) return { decision: 'deny', reason, evaluationError: 'webhook subject access review returned both allow and deny response' };
  if (s.denied === true) return withError({ decision: 'deny', reason });
  if (s.allowed === true) return withError({ decision: 'allow', reason });
  return withError(noOpinion(reason));
}

export class WebhookAuthorizer implements Authorizer {
  readonly name = 'Webhook';
  private readonly cache = new BoundedMap<string, { decision: Decision; expires: number }>(cacheSize);
  private readonly now: () => number;

  constructor(private readonly o: WebhookAuthorizerOptions) {
    this.now = o.now ?? Date.now;
  }

  async authorize(attrs: Attributes): Promise<Decision> {
    const spec = reviewSpec(attrs, this.o.version);
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached && cached.expires > this.now()) return cached.decision;
    if (cached) this.cache.delete(key);
    let decision: Decision;
    try {
      const apiVersion = `${vocabulary.authorizationGroup}/${this.o.version}`;
      decision = decisionOf(await this.post({ apiVersion, kind: 'SubjectAccessReview', spec }), apiVersion);
    } catch (e) {
      // No opinion, never cached: the next request asks again.
      this.o.log?.('authorization webhook failed; no opinion', { err: (e as Error).message, user: attrs.user.username, verb: attrs.verb });
      return noOpinion('', `error contacting the authorization webhook: ${(e as Error).message}`);
    }
    const ttl = decision.decision === 'allow' ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs;
    if (ttl > 0) {
      this.cache.set(key, { decision, expires: this.now() + ttl });
    }
    return decision;
  }

  /** A webhook cannot list what a user may do, as upstream. */
  rulesFor(_user: UserInfo, _namespace: string): RuleSet {
    return { resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['webhook authorizer does not support user rule resolution'] };
  }

  private post(body: Json): Promise<unknown> {
    return postReview(this.o.endpoint, body, this.o.timeoutMs);
  }
}
