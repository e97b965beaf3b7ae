// One call of a webhook, from the review sent to a checked answer: where to
// send it (a URL; services cannot be resolved until this server serves
// them), with which credentials and trust, within the webhook's timeout.
// Every failure is a CallingWebhookError, for the failure policy to judge.

import { randomUUID } from 'node:crypto';
import { jsonTextExceedsDepth, maxNestingDepth } from '../../machinery/limits.js';
import type { KubeObject } from '../../api/kind.js';
import type { AdmissionRequest } from '../types.js';
import { WebhookCallError, type WebhookClient, type WebhookEndpoint } from './client.js';
import type { CredentialResolver } from './credentials.js';
import { CallingWebhookError } from './errors.js';
import type { Invocation } from './matcher.js';
import { InvalidResponse, reviewBody, reviewVersionFor, verifyResponse, type ReviewResponse, type ReviewVersion } from './review.js';

export interface CallOutcome {
  response: ReviewResponse;
  version: ReviewVersion;
}

export class WebhookCaller {
  constructor(private readonly client: WebhookClient, private readonly credentials: CredentialResolver) {}

  /** Sends `object` (the request's object as the invocation's version names it) and checks the answer. */
  async call(invocation: Invocation, request: AdmissionRequest, mutating: boolean, object: KubeObject | undefined): Promise<CallOutcome> {
    const hook = invocation.webhook;
    const version = reviewVersionFor(hook.admissionReviewVersions);
    if (!version) {
      throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)', 400);
    }
    const endpoint = this.endpoint(invocation);
    const uid = randomUUID();
    let reply;
    try {
      reply = await this.client.post(endpoint, reviewBody(version, uid, request, invocation, object), hook.timeoutSeconds * 1000);
    } catch (e) {
      if (e instanceof WebhookCallError) throw new CallingWebhookError(hook.name, `failed to call webhook: ${e.message}`);
      throw e;
    }
    if (reply.status < 200 || reply.status > 299) {
      const said = reply.body.toString('utf8').slice(0, 256).trim();
      throw new CallingWebhookError(hook.name, `failed to call webhook: the server responded with the status code ${reply.status}${said ? ` (${JSON.stringify(said)})` : ''}`, reply.status);
    }
    const text = reply.body.toString('utf8');
    let decoded: unknown;
    try {
      if (jsonTextExceedsDepth(text)) throw new Error(`the response is nested deeper than ${maxNestingDepth} levels`);
      decoded = JSON.parse(text);
    } catch (e) {
      throw new CallingWebhookError(hook.name, `failed to call webhook: the response is not JSON: ${(e as Error).message}`);
    }
    try {
      return { response: verifyResponse(version, uid, mutating, decoded), version };
    } catch (e) {
      if (e instanceof InvalidResponse) throw new CallingWebhookError(hook.name, `received invalid webhook response: ${e.message}`);
      throw e;
    }
  }

  private endpoint(invocation: Invocation): WebhookEndpoint {
    const hook = invocation.webhook;
    if (!hook.url) {
      const service = hook.service ? `${hook.service.name}.${hook.service.namespace}.svc` : 'the service';
      throw new CallingWebhookError(hook.name, `could not get REST client: cannot resolve ${service}: this server does not serve Services yet; give the webhook a clientConfig.url instead`, 500);
    }
    let url: URL;
    try {
      url = new URL(hook.url);
    } catch (e) {
      throw new CallingWebhookError(hook.name, `could not get REST client: ${(e as Error).message}`, 500);
    }
    // As upstream's client, the timeout travels as a parameter so the webhook can bound its own work.
    url.search = `timeout=${hook.timeoutSeconds}s`;
    return { url, caPem: hook.caPem, credentials: this.credentials.for(url.host) };
  }
}
