// The authorizer library upstream offers in webhook matchConditions:
// `authorizer.group(g).resource(r)[.subresource(s)][.namespace(n)][.name(n)]
// .check(verb)`, `authorizer.path(p).check(httpVerb)`,
// `authorizer.serviceAccount(ns, name)` (the same checks as that account),
// `authorizer.requestResource` (the request's own resource), and on the
// decision `allowed()`, `reason()`, `errored()`, `error()`.
//
// Our authorizers may answer asynchronously and CEL evaluates synchronously,
// so a check is answered from a memo of decisions (AuthorizationAnswers): a
// check not yet answered records its question and fails the evaluation; the
// caller asks the authorizer the recorded questions, then evaluates again,
// until every check the expression reaches has its answer. Evaluation being
// deterministic, each round reaches the same checks in the same order.
//
// Not offered: the selector checks (`fieldSelector`, `labelSelector`), which
// our authorizers' attributes do not carry.

import { celList, celMap, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import type { Attributes, Decision } from '../../../machinery/authorization.js';
import { serviceAccountGroups, serviceAccountUsername } from '../../../machinery/serviceaccount.js';
import type { UserInfo } from '../../../machinery/user.js';
import { field, opaque } from './values.js';

const { STRING, BOOL, DYN } = CelScalar;

/** Where checks find their decisions while an expression is evaluated. */
export interface AuthorizationAnswers {
  /** The decision on `attributes` when known; otherwise the question is recorded and undefined returned. */
  lookup(attributes: Attributes): Decision | undefined;
}

let answering: AuthorizationAnswers | undefined;

/** Runs `evaluate` (synchronous) with its authorization checks answered from `answers`. */
export function withAuthorizationAnswers<T>(answers: AuthorizationAnswers, evaluate: () => T): T {
  const outer = answering;
  answering = answers;
  try {
    return evaluate();
  } finally {
    answering = outer;
  }
}

/** The error of a check whose answer is not known yet (the caller asks, then evaluates again). */
export const awaitingAnswer = 'authorization check awaiting its answer';

function userValue(user: UserInfo): CelValue {
  const extra = new Map<string, CelValue>();
  for (const [k, v] of Object.entries(user.extra ?? {})) extra.set(k, celList(v));
  return opaque('user', { username: user.username, uid: user.uid ?? '', groups: celList(user.groups), extra: celMap(extra) });
}

function userOf(v: CelValue): UserInfo {
  const u = field<CelValue>(v, 'authorizer', 'user');
  const extra: Record<string, string[]> = Object.create(null);
  for (const [k, list] of field<Map<string, Iterable<string>>>(u, 'user', 'extra')) extra[String(k)] = [...list];
  const uid = field<string>(u, 'user', 'uid');
  return { username: field<string>(u, 'user', 'username'), ...(uid ? { uid } : {}), groups: [...field<Iterable<string>>(u, 'user', 'groups')], extra };
}

interface ResourceFields { group: string; version: string; resource: string; subresource: string; namespace: string; name: string }

function resourceCheck(authorizer: CelValue, f: ResourceFields): CelValue {
  return opaque('resourcecheck', { authorizer, ...f });
}

function resourceFields(check: CelValue): ResourceFields {
  const get = (k: keyof ResourceFields) => field<string>(check, 'resourcecheck', k);
  return { group: get('group'), version: get('version'), resource: get('resource'), subresource: get('subresource'), namespace: get('namespace'), name: get('name') };
}

/** The `authorizer` variable for a request by `user`, with `requestResource` the request's own resource. */
export function authorizerValue(user: UserInfo, request: ResourceFields): CelValue {
  const bare = opaque('authorizer', { user: userValue(user) });
  return opaque('authorizer', { user: userValue(user), requestResource: resourceCheck(bare, request) });
}

function decide(attributes: Attributes): CelValue {
  if (!answering) throw new Error('no authorizer is available to this expression');
  const d = answering.lookup(attributes);
  if (!d) throw new Error(awaitingAnswer);
  return opaque('decision', { allowed: d.decision === 'allow', reason: d.reason, errored: d.evaluationError !== undefined, error: d.evaluationError ?? '' });
}

const withField = (name: keyof ResourceFields) => celMethod(name, DYN, [STRING], DYN, function (value) {
  return resourceCheck(field<CelValue>(this, 'resourcecheck', 'authorizer'), { ...resourceFields(this), [name]: value });
});

const decisionField = (name: string, type: typeof STRING | typeof BOOL) => celMethod(name, DYN, [], type, function () {
  return field<never>(this, 'decision', name);
});

export const authorizationLib: CelFunc[] = [
  celMethod('group', DYN, [STRING], DYN, function (group) {
    field(this, 'authorizer', 'user');
    return resourceCheck(this, { group, version: '*', resource: '', subresource: '', namespace: '', name: '' });
  }),
  celMethod('resource', DYN, [STRING], DYN, function (resource) {
    return resourceCheck(field<CelValue>(this, 'resourcecheck', 'authorizer'), { ...resourceFields(this), resource });
  }),
  withField('subresource'),
  withField('namespace'),
  withField('name'),
  celMethod('path', DYN, [STRING], DYN, function (path) {
    field(this, 'authorizer', 'user');
    return opaque('pathcheck', { authorizer: this, path });
  }),
  celMethod('serviceAccount', DYN, [STRING, STRING], DYN, function (namespace, name) {
    field(this, 'authorizer', 'user');
    return opaque('authorizer', { user: userValue({ username: serviceAccountUsername(namespace, name), groups: serviceAccountGroups(namespace) }) });
  }),
  celMethod('check', DYN, [STRING], DYN, function (verb) {
    const path = (() => { try { return field<string>(this, 'pathcheck', 'path'); } catch { return undefined; } })();
    if (path !== undefined) {
      return decide({ user: userOf(field<CelValue>(this, 'pathcheck', 'authorizer')), verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '' });
    }
    const f = resourceFields(this);
    return decide({
      user: userOf(field<CelValue>(this, 'resourcecheck', 'authorizer')), verb, isResourceRequest: true, path: '',
      apiGroup: f.group, apiVersion: f.version, resource: f.resource,
      subresource: f.subresource || undefined, namespace: f.namespace || undefined, name: f.name || undefined,
    });
  }),
  decisionField('allowed', BOOL),
  decisionField('reason', STRING),
  decisionField('errored', BOOL),
  decisionField('error', STRING),
];
