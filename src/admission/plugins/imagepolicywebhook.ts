// ImagePolicyWebhook: a backend of the cluster's own decides which images
// pods may run. For each create or update of a pod (and each ephemeral
// container added) the images, the pod's `*.image-policy.<product domain>/*`
// annotations and the namespace go to the backend as an ImageReview, POSTed
// over TLS with the credentials of the kubeconfig the configuration names;
// answers are cached by request for allowTTL or denyTTL seconds. A backend
// that cannot be reached or answers wrongly denies, unless defaultAllow:
// then the pod is admitted and marked as having failed open. Validating
// phase; every refusal is 403 with upstream's messages.
//
// Configuration (upstream's shape): imagePolicy: { kubeConfigFile, allowTTL
// (s), denyTTL (s), retryBackoff (ms), defaultAllow }; 0 means the default,
// -1 turns a TTL or the backoff off. The ImageReview's group version must be
// turned on with --runtime-config (the spec's rule); without it the start stops.

import { resolve } from 'node:path';
import { ownValue } from '../../machinery/ownkeys.js';
import { product, productGroup, wrongAnswerKind, upstreamCompat } from '../../machinery/vocabulary.js';
import { jsonTextExceedsDepth } from '../../machinery/limits.js';
import { readKubeconfigEndpoint } from '../../client/kubeconfig.js';
import type { KindVersion, KubeObject } from '../../api/kind.js';
import { addAuditAnnotation, type AdmissionPlugin, type AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { AdmissionConfigError } from '../plugin-names.js';
import { configSource, expectKind } from '../config.js';
import type { WebhookClient, WebhookEndpoint, WebhookReply } from '../webhook/client.js';
import type { ServesVersion } from '../webhook/matcher.js';

export const imagePolicyGroup = productGroup('imagepolicy');
const reviewApiVersion = `${imagePolicyGroup}/v1alpha1`;
/** Pod annotations sent to the backend: `<anything>.image-policy.<product domain>/<key>`. */
const reviewedAnnotationInfix = `.image-policy.${product.domain}/`;
/** Audit annotations: the backend's, and the one a failing-open review leaves. */
const auditPrefix = `imagepolicywebhook.image-policy.${product.domain}/`;
/** Left on a pod admitted although the backend failed (upstream's ImagePolicyFailedOpenKey). */
export const failedOpenPodAnnotation = `alpha.image-policy.${product.domain}/failed-open`;

/** As upstream's rest client for webhooks. */
const requestTimeoutMs = 30_000;
/** Answers kept at most (upstream's LRU size). */
const cacheEntries = 1024;
/** Tries of one review when the backend answers a retryable failure (upstream's backoff steps). */
const attempts = 5;

export interface ImagePolicySettings {
  endpoint: WebhookEndpoint;
  allowTtlMs: number;
  denyTtlMs: number;
  retryBackoffMs: number;
  defaultAllow: boolean;
}

/** Go's time.Duration text for whole milliseconds (`500ms`, `1s`, `5m0s`, `1h30m0s`). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  ms = Math.abs(ms);
  if (ms < 1000) return `${sign}${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const secondsText = `${seconds}s`;
  if (hours) return `${sign}${hours}h${minutes}m${secondsText}`;
  if (minutes) return `${sign}${minutes}m${secondsText}`;
  return `${sign}${secondsText}`;
}

/** Upstream's normalizeConfigDuration: -1 off, 0 the default, otherwise in range, in `scaleMs` units. */
function duration(value: unknown, field: string, scaleMs: number, minMs: number, maxMs: number, defaultMs: number, what: string): number {
  if (value === undefined || value === null || value === 0) return defaultMs;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new AdmissionConfigError(`${what}: imagePolicy.${field} must be a whole number`);
  if (value === -1) return 0;
  const ms = value * scaleMs;
  if (ms < minMs || ms > maxMs) {
    throw new AdmissionConfigError(`${what}: imagePolicy.${field}: valid value is between ${goDuration(minMs)} and ${goDuration(maxMs)}, got ${goDuration(ms)}`);
  }
  return ms;
}

/** The plugin's configuration and the backend its kubeconfig names, checked now. */
export async function imagePolicySettings(config: Record<string, unknown> | undefined, serves: ServesVersion | undefined): Promise<ImagePolicySettings> {
  if (!config) throw new AdmissionConfigError('admission plugin ImagePolicyWebhook needs a configuration (imagePolicy) in --admission-control-config-file: no config specified');
  const what = configSource(config, 'ImagePolicyWebhook');
  // The versioned form of newer upstream releases is accepted beside the bare one.
  if (ownValue(config, 'kind') !== undefined || ownValue(config, 'apiVersion') !== undefined) {
    expectKind(config, [productGroup('imagepolicy.admission'), `imagepolicy.admission.${upstreamCompat.groupDomain}`].map((g) => ({ apiVersion: `${g}/v1alpha1`, kind: 'ImagePolicyWebhookConfiguration' })), what);
  }
  // No kind declares this version: --runtime-config's answer for it reads only its name.
  if (!serves?.(imagePolicyGroup, { name: 'v1alpha1' } as KindVersion, 'imagereviews')) {
    throw new AdmissionConfigError(`admission plugin ImagePolicyWebhook sends ${reviewApiVersion} ImageReviews: turn that version on with --runtime-config=${reviewApiVersion}=true`);
  }
  const policy = ownValue(config, 'imagePolicy');
  if (!policy || typeof policy !== 'object' || Array.isArray(policy)) throw new AdmissionConfigError(`${what}: imagePolicy is required`);
  const p = policy as Record<string, unknown>;
  const retryBackoffMs = duration(ownValue(p, 'retryBackoff'), 'retryBackoff', 1, 1, 300_000, 500, what);
  const allowTtlMs = duration(ownValue(p, 'allowTTL'), 'allowTTL', 1000, 1000, 1_800_000, 300_000, what);
  const denyTtlMs = duration(ownValue(p, 'denyTTL'), 'denyTTL', 1000, 1000, 1_800_000, 30_000, what);
  const defaultAllow = ownValue(p, 'defaultAllow') ?? false;
  if (typeof defaultAllow !== 'boolean') throw new AdmissionConfigError(`${what}: imagePolicy.defaultAllow must be true or false`);
  const path = ownValue(p, 'kubeConfigFile');
  if (typeof path !== 'string' || path === '') throw new AdmissionConfigError(`${what}: imagePolicy.kubeConfigFile is required`);
  let remote;
  try {
    // A relative path is the server's working folder's, as upstream reads it.
    remote = await readKubeconfigEndpoint(resolve(path));
  } catch (e) {
    throw new AdmissionConfigError(`${what}: the image policy backend's kubeconfig "${path}": ${(e as Error).message}`);
  }
  const url = new URL(remote.server);
  if (url.protocol !== 'https:') throw new AdmissionConfigError(`${what}: the image policy backend ${remote.server} in "${path}" must use TLS (https)`);
  if (remote.insecureSkipTlsVerify) throw new AdmissionConfigError(`${what}: the image policy backend in "${path}" must be verified: insecure-skip-tls-verify is not accepted`);
  const endpoint: WebhookEndpoint = { url, caPem: remote.caPem, credentials: { certPem: remote.certPem, keyPem: remote.keyPem, token: remote.token } };
  return { endpoint, allowTtlMs, denyTtlMs, retryBackoffMs, defaultAllow };
}

interface ReviewStatus {
  allowed: boolean;
  reason?: string;
  auditAnnotations?: Record<string, string>;
}

/** Answers by review spec, each until its TTL, the least recently used dropped past the bound. */
class AnswerCache {
  private readonly entries = new Map<string, { status: ReviewStatus; until: number }>();

  constructor(private readonly now: () => number) {}

  get(key: string): ReviewStatus | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.until <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.status;
  }

  set(key: string, status: ReviewStatus, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { status, until: this.now() + ttlMs });
    if (this.entries.size > cacheEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** A failure of the backend (as opposed to its denial): it follows defaultAllow. */
class BackendError extends Error {}

/** Failures worth another try, as upstream's DefaultShouldRetry: a reset connection, 429, 500, 504, or an answer with Retry-After. */
function retryable(reply: WebhookReply | undefined, error: Error | undefined): boolean {
  if (error) return /ECONNRESET|socket hang up/.test(error.message);
  return reply !== undefined && [429, 500, 504].includes(reply.status);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ImagePolicyWebhook implements AdmissionPlugin {
  readonly name = 'ImagePolicyWebhook';
  private readonly cache: AnswerCache;

  constructor(private readonly settings: ImagePolicySettings, private readonly client: WebhookClient, now: () => number = () => Date.now()) {
    this.cache = new AnswerCache(now);
  }

  async validate(r: AdmissionRequest): Promise<void> {
    if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return;
    if (r.kind.group !== '' || r.kind.plural !== 'pods' || !r.object) return;
    const subresource = r.subresource ?? '';
    if (subresource !== '' && subresource !== 'ephemeralcontainers') return;
    const pod = r.object;
    const lists = subresource === '' ? ['containers', 'initContainers'] : ['ephemeralContainers'];
    const containers = lists.flatMap((list) => (Array.isArray(pod.spec?.[list]) ? pod.spec[list] : []) as KubeObject[])
      .map((c) => (typeof c?.image === 'string' && c.image !== '' ? { image: c.image } : {}));
    const spec: Record<string, unknown> = {};
    if (containers.length) spec.containers = containers;
    const annotations = this.reviewedAnnotations(pod);
    if (Object.keys(annotations).length) spec.annotations = annotations;
    if (r.namespace) spec.namespace = r.namespace;
    let status: ReviewStatus;
    try {
      status = await this.review(spec);
    } catch (e) {
      if (!(e instanceof BackendError) || !this.settings.defaultAllow) throw forbiddenRequest(r, (e as Error).message);
      addAuditAnnotation(r, `${auditPrefix}failed-open`, 'true');
      pod.metadata ??= {};
      pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [failedOpenPodAnnotation]: 'true' };
      return;
    }
    for (const [key, value] of Object.entries(status.auditAnnotations ?? {})) addAuditAnnotation(r, `${auditPrefix}${key}`, value);
    if (status.allowed) return;
    throw forbiddenRequest(r, status.reason ? `image policy webhook backend denied one or more images: ${status.reason}` : 'one or more images rejected by webhook backend');
  }

  /** The pod's annotations the backend sees, in key order (the cache key is their JSON). */
  private reviewedAnnotations(pod: KubeObject): Record<string, string> {
    const all = pod.metadata?.annotations;
    const out: Record<string, string> = {};
    if (!all || typeof all !== 'object') return out;
    for (const key of Object.keys(all).sort()) {
      if (key.includes(reviewedAnnotationInfix) && typeof all[key] === 'string') Object.defineProperty(out, key, { value: all[key], enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  /** The backend's answer for `spec`, from the cache when it holds one. */
  private async review(spec: Record<string, unknown>): Promise<ReviewStatus> {
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const body = Buffer.from(JSON.stringify({ apiVersion: reviewApiVersion, kind: 'ImageReview', metadata: { creationTimestamp: null }, spec, status: { allowed: false } }));
    const reply = await this.post(body);
    if (reply.status < 200 || reply.status >= 300) throw new BackendError(`Error contacting webhook: ${reply.status}`);
    const text = reply.body.toString('utf8');
    let answer: unknown;
    try {
      if (jsonTextExceedsDepth(text)) throw new Error('nested too deeply');
      answer = JSON.parse(text);
    } catch (e) {
      throw new BackendError(`the image policy backend's answer is not an ImageReview: ${(e as Error).message}`);
    }
    const wrong = wrongAnswerKind(answer, reviewApiVersion, 'ImageReview');
    if (wrong) throw new BackendError(`the image policy backend's answer is not an ImageReview: ${wrong}`);
    const got = ownValue(answer as Record<string, unknown>, 'status');
    const fields = got && typeof got === 'object' && !Array.isArray(got) ? (got as Record<string, unknown>) : {};
    const status: ReviewStatus = { allowed: ownValue(fields, 'allowed') === true };
    const reason = ownValue(fields, 'reason');
    if (typeof reason === 'string' && reason) status.reason = reason;
    const audit = ownValue(fields, 'auditAnnotations');
    if (audit && typeof audit === 'object' && !Array.isArray(audit)) {
      status.auditAnnotations = Object.fromEntries(Object.entries(audit).filter((e): e is [string, string] => typeof e[1] === 'string'));
    }
    this.cache.set(key, status, status.allowed ? this.settings.allowTtlMs : this.settings.denyTtlMs);
    return status;
  }

  /** One POST, tried again with a growing backoff while the failure is one worth retrying. */
  private async post(body: Buffer): Promise<WebhookReply> {
    let delay = this.settings.retryBackoffMs;
    for (let attempt = 1; ; attempt++) {
      let reply: WebhookReply | undefined;
      let error: Error | undefined;
      try {
        reply = await this.client.post(this.settings.endpoint, body, requestTimeoutMs);
      } catch (e) {
        error = e as Error;
      }
      if (attempt >= attempts || !retryable(reply, error)) {
        if (error) throw new BackendError(error.message);
        return reply!;
      }
      await sleep(delay * (1 + Math.random() * 0.2));
      delay *= 1.5;
    }
  }
}
