// The AdmissionReview a webhook receives and the checks of its answer, in
// the first version of the webhook's admissionReviewVersions this server
// speaks (v1, v1beta1). Answers must be an AdmissionReview of the version
// sent (by our group name or upstream's): upstream decodes them into that
// type, so a Status or another kind never passes as an answer. v1 answers
// must also carry the request's uid back; `allowed` must be a boolean in both.

import { vocabulary, wrongAnswerKind } from '../../machinery/vocabulary.js';
import { ownValue } from '../../machinery/ownkeys.js';
import type { KubeObject } from '../../api/kind.js';
import { codecFor, type VersionCodec } from '../../api/codec.js';
import { requestKind, requestResource, type AdmissionRequest, type CalledAs } from '../types.js';
import { webhookStatus, type WebhookStatus } from './errors.js';

export type ReviewVersion = 'v1' | 'v1beta1';

const spoken: readonly ReviewVersion[] = ['v1', 'v1beta1'];

/** The version to send: the webhook's first that we speak, or undefined. */
export function reviewVersionFor(versions: readonly string[]): ReviewVersion | undefined {
  return versions.find((v): v is ReviewVersion => (spoken as readonly string[]).includes(v));
}

export const reviewApiVersion = (version: ReviewVersion) => `${vocabulary.admissionGroup}/${version}`;

/**
 * The request's (stored) object at the version the webhook's rule matched:
 * converted when that is another version of the kind (matchPolicy
 * Equivalent), as it is otherwise.
 */
export function versioned(obj: KubeObject | undefined, invocation: CalledAs, request: AdmissionRequest): KubeObject | undefined {
  if (obj === undefined) return undefined;
  const codec = invocationCodec(invocation, request);
  return codec ? codec.fromStored(obj) : obj;
}

/**
 * For a version converted later (a custom resource's conversion webhook):
 * the request's objects converted to it ahead, so that `versioned` (match
 * conditions, the review) sees what that webhook answers, as upstream.
 */
export async function convertAheadFor(invocation: CalledAs, request: AdmissionRequest): Promise<void> {
  await invocationCodec(invocation, request)?.aheadFromStored([request.object, request.oldObject]);
}

/** The codec between the stored version and the one the webhook was matched at, when they differ. */
export function invocationCodec(invocation: CalledAs, request: AdmissionRequest): VersionCodec | undefined {
  const { group, version } = invocation.kind;
  return codecFor(request.kind, group, version);
}

/**
 * The request's fields as a review carries them, upstream's omissions of
 * empty strings included, without the objects (match conditions see them
 * as variables of their own).
 */
export function reviewRequest(uid: string, request: AdmissionRequest, invocation: CalledAs): Record<string, unknown> {
  const user = request.user;
  const userInfo: Record<string, unknown> = { username: user?.username ?? '' };
  if (user?.uid) userInfo.uid = user.uid;
  if (user?.groups?.length) userInfo.groups = user.groups;
  if (user?.extra && Object.keys(user.extra).length) userInfo.extra = user.extra;
  return {
    uid,
    kind: invocation.kind,
    resource: invocation.resource,
    ...(request.subresource ? { subResource: request.subresource } : {}),
    requestKind: requestKind(request),
    requestResource: requestResource(request),
    ...(request.subresource ? { requestSubResource: request.subresource } : {}),
    ...(request.name ? { name: request.name } : {}),
    ...(request.namespace ? { namespace: request.namespace } : {}),
    operation: request.operation,
    userInfo,
    dryRun: request.dryRun,
    options: request.operation === 'CONNECT' ? null : request.options,
  };
}

/** The review sent: every field of the request and the objects at the invocation's version. */
export function reviewBody(version: ReviewVersion, uid: string, request: AdmissionRequest, invocation: CalledAs, object: KubeObject | undefined): Buffer {
  const { dryRun, options, ...head } = reviewRequest(uid, request, invocation);
  const review = { ...head, object: object ?? null, oldObject: versioned(request.oldObject, invocation, request) ?? null, dryRun, options };
  return Buffer.from(JSON.stringify({ kind: 'AdmissionReview', apiVersion: reviewApiVersion(version), request: review }));
}

/** A well-formed answer. */
export interface ReviewResponse {
  allowed: boolean;
  status: WebhookStatus;
  /** The decoded JSON patch text, when one was sent. */
  patch?: Buffer;
  patchType?: string;
  auditAnnotations: [string, string][];
  warnings: string[];
}

/** Thrown for an answer that is not a valid review response; the message says why. */
export class InvalidResponse extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Checks the decoded body of a webhook's answer. */
export function verifyResponse(version: ReviewVersion, uid: string, mutating: boolean, body: unknown): ReviewResponse {
  const wrongKind = wrongAnswerKind(body, reviewApiVersion(version), 'AdmissionReview');
  if (wrongKind) throw new InvalidResponse(`webhook response: ${wrongKind}`);
  const response = ownValue(body as Record<string, unknown>, 'response');
  if (!isObject(response)) throw new InvalidResponse('webhook response was absent');
  if (version === 'v1') {
    const got = ownValue(response, 'uid');
    if (got !== uid) throw new InvalidResponse(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof got === 'string' ? got : '')}`);
  }
  const allowed = ownValue(response, 'allowed');
  if (typeof allowed !== 'boolean') throw new InvalidResponse('response.allowed is required and must be a boolean');
  const rawPatch = ownValue(response, 'patch');
  const hasPatch = rawPatch !== undefined && rawPatch !== null && rawPatch !== '';
  const rawType = ownValue(response, 'patchType');
  const hasType = rawType !== undefined && rawType !== null;
  let patch: Buffer | undefined;
  let patchType: string | undefined;
  if (mutating) {
    if (version === 'v1') {
      if (hasPatch && !hasType) throw new InvalidResponse('webhook returned response.patch but not response.patchType');
      if (!hasPatch && hasType) throw new InvalidResponse('webhook returned response.patchType but not response.patch');
      if (hasType && (typeof rawType !== 'string' || rawType === '')) throw new InvalidResponse(`webhook returned invalid response.patchType of ${JSON.stringify(rawType)}`);
      patchType = hasType ? (rawType as string) : undefined;
    } else if (hasPatch) {
      patchType = 'JSONPatch'; // v1beta1 answers did not name it; JSONPatch is the only kind
    }
    if (hasPatch) {
      if (typeof rawPatch !== 'string' || !base64.test(rawPatch)) throw new InvalidResponse('response.patch must be base64 text');
      patch = Buffer.from(rawPatch, 'base64');
    }
  } else if (version === 'v1') {
    if (hasPatch) throw new InvalidResponse('validating webhook may not return response.patch');
    if (hasType) throw new InvalidResponse('validating webhook may not return response.patchType');
  }
  const annotations = ownValue(response, 'auditAnnotations');
  const auditAnnotations: [string, string][] = isObject(annotations)
    ? Object.keys(annotations).filter((k) => typeof ownValue(annotations, k) === 'string').map((k) => [k, ownValue(annotations, k) as string])
    : [];
  const warnings = ownValue(response, 'warnings');
  return {
    allowed,
    status: webhookStatus(ownValue(response, 'status')),
    patch, patchType, auditAnnotations,
    warnings: Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === 'string') : [],
  };
}
