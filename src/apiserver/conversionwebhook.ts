// Conversion webhooks of custom resources: a ConversionReview v1 (under
// upstream's group name, which conversion webhooks decode) POSTed over
// HTTPS (the admission webhooks' client: the definition's caBundle, keep-alive
// connections, a bounded answer), one review per list, watch event or write
// (see VersionCodec.ahead). As upstream, the webhook may change only labels
// and annotations of metadata, must answer every object in the version asked,
// and any failure is a 500 for that request naming the webhook: nothing is
// stored in the wrong shape.

import { randomUUID } from 'node:crypto';
import type { Conversion } from '../api/apiextensions/customkind.js';
import type { KubeObject, LaterConversion } from '../api/kind.js';
import { WebhookClient } from '../admission/webhook/client.js';
import { ApiError, errors } from '../machinery/errors.js';
import { ownValue } from '../machinery/ownkeys.js';
import { jsonTextExceedsDepth, maxNestingDepth } from '../machinery/limits.js';
import { upstreamCompat, vocabulary, wrongAnswerKind } from '../machinery/vocabulary.js';
import type { ApiObject } from '../client/types.js';

type Json = Record<string, any>;

/** Upstream's fixed bound on a conversion call. */
const conversionTimeoutMs = 30_000;

const reviewVersions = ['v1', 'v1beta1'];

class ConversionFailed extends Error {}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class ConversionWebhooks {
  private readonly client = new WebhookClient();

  /** The conversions of a definition's versions, or undefined when it converts by relabelling (None). */
  conversionFor(crd: ApiObject): ((version: string) => Conversion) | undefined {
    const conversion = crd.spec?.conversion;
    if (conversion?.strategy !== 'Webhook') return undefined;
    const kind: string = crd.spec.names.kind;
    const group: string = crd.spec.group;
    const hook: Json = conversion.webhook ?? {};
    const later: LaterConversion = { convert: (objects, apiVersion) => this.convert(hook, group, kind, objects, apiVersion) };
    return () => ({ toStored: (o) => o, fromStored: (o) => o, later });
  }

  close(): void {
    this.client.close();
  }

  private async convert(hook: Json, group: string, kind: string, objects: KubeObject[], desired: string): Promise<KubeObject[]> {
    const from = objects[0]?.apiVersion ?? `${group}/?`;
    try {
      return await this.call(hook, objects, desired);
    } catch (e) {
      if (e instanceof ConversionFailed) throw errors.internal(`conversion webhook for ${from}, Kind=${kind} ${e.message}`);
      throw e instanceof ApiError ? e : errors.internal(`conversion webhook for ${from}, Kind=${kind} failed: ${(e as Error).message}`);
    }
  }

  private async call(hook: Json, objects: KubeObject[], desired: string): Promise<KubeObject[]> {
    const config: Json = hook.clientConfig ?? {};
    if (typeof config.url !== 'string' || !config.url) {
      const service = config.service ? `${config.service.name}.${config.service.namespace}.svc` : 'the service';
      throw new ConversionFailed(`failed: cannot resolve ${service}: this server does not serve Services yet; give the webhook a clientConfig.url instead`);
    }
    const url = new URL(config.url);
    url.search = `timeout=${conversionTimeoutMs / 1000}s`;
    const caPem = typeof config.caBundle === 'string' && config.caBundle ? Buffer.from(config.caBundle, 'base64').toString('utf8') : undefined;
    const reviewVersion = reviewVersions.find((v) => (hook.conversionReviewVersions ?? []).includes(v)) ?? 'v1';
    // Sent under upstream's group name, as conversion webhooks are written for it (their scheme decodes only
    // apiextensions.k8s.io); an answer in either group is taken.
    const apiVersion = `${upstreamCompat.conversionReviewGroup}/${reviewVersion}`;
    const uid = randomUUID();
    const review = { apiVersion, kind: 'ConversionReview', request: { uid, desiredAPIVersion: desired, objects } };
    let reply;
    try {
      reply = await this.client.post({ url, caPem }, Buffer.from(JSON.stringify(review)), conversionTimeoutMs);
    } catch (e) {
      throw new ConversionFailed(`failed: ${(e as Error).message}`);
    }
    if (reply.status < 200 || reply.status > 299) throw new ConversionFailed(`failed: the server responded with the status code ${reply.status}`);
    const text = reply.body.toString('utf8');
    let answer: unknown;
    try {
      if (jsonTextExceedsDepth(text)) throw new Error(`the response is nested deeper than ${maxNestingDepth} levels`);
      answer = JSON.parse(text);
    } catch (e) {
      throw new ConversionFailed(`failed: the response is not JSON: ${(e as Error).message}`);
    }
    const wrong = wrongAnswerKind(answer, `${vocabulary.apiextensionsGroup}/${reviewVersion}`, 'ConversionReview');
    if (wrong) throw new ConversionFailed(`failed: ${wrong}`);
    const response = ownValue(answer as Json, 'response');
    if (!isObject(response)) throw new ConversionFailed('failed: no response provided');
    if (response.uid !== uid) throw new ConversionFailed(`failed: expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? '')}`);
    const result: Json = isObject(response.result) ? response.result : {};
    if (result.status !== 'Success') throw new ConversionFailed(`returned failure: ${typeof result.message === 'string' ? result.message : ''}`);
    const converted: unknown[] = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
    if (converted.length !== objects.length) {
      throw new ConversionFailed(`failed: returned ${converted.length} objects, expected ${objects.length}`);
    }
    return converted.map((c, i) => restoredMetadata(objects[i]!, c, desired, i));
  }
}

/** A converted object as upstream keeps it: the original metadata with the webhook's labels and annotations. */
function restoredMetadata(original: KubeObject, converted: unknown, desired: string, index: number): KubeObject {
  if (!isObject(converted)) throw new ConversionFailed(`failed: invalid converted object at index ${index}: not an object`);
  if (converted.apiVersion !== desired) {
    throw new ConversionFailed(`failed: invalid converted object at index ${index}: invalid apiVersion ${JSON.stringify(converted.apiVersion ?? '')}, expected ${JSON.stringify(desired)}`);
  }
  if (converted.kind !== original.kind) throw new ConversionFailed(`failed: invalid converted object at index ${index}: invalid kind ${JSON.stringify(converted.kind ?? '')}, expected ${JSON.stringify(original.kind)}`);
  const meta: Json = isObject(converted.metadata) ? converted.metadata : {};
  const was: Json = original.metadata ?? {};
  for (const field of ['name', 'namespace', 'uid']) {
    if ((meta[field] ?? undefined) !== (was[field] ?? undefined)) {
      throw new ConversionFailed(`failed: invalid metadata of converted object at index ${index}: must not change metadata.${field}`);
    }
  }
  const metadata: Json = { ...was };
  for (const field of ['labels', 'annotations']) {
    if (isObject(meta[field])) metadata[field] = meta[field];
    else delete metadata[field];
  }
  return { ...converted, metadata };
}
