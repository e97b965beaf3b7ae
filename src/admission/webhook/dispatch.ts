// What mutating and validating webhooks share around each call: the plugin's
// parts, the dry-run rule, and the bookkeeping of an outcome (metrics, the
// failure policy, the error the request gets), as upstream's dispatchers.

import { errors } from '../../machinery/errors.js';
import type { AdmissionMetrics, WebhookType } from '../metrics.js';
import type { AdmissionRequest } from '../types.js';
import type { WebhookCaller } from './call.js';
import { CallingWebhookError, WebhookRejection } from './errors.js';
import type { WebhookMatcher } from './matcher.js';
import type { CompiledWebhook, WebhookSource } from './source.js';

export interface WebhookPluginParts {
  source: WebhookSource;
  matcher: WebhookMatcher;
  caller: WebhookCaller;
  /** The group of the webhook configuration kinds, whose writes no webhook sees. */
  configurationGroup: string;
  metrics?: AdmissionMetrics;
  warn: (message: string, extra?: object) => void;
}

/** A dry run may only reach webhooks that declare they have no side effects then. */
export function checkDryRun(hook: CompiledWebhook, request: AdmissionRequest): void {
  if (!request.dryRun) return;
  if (hook.sideEffects === undefined) throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil', 400);
  if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
    throw errors.badRequest(`admission webhook "${hook.name}" does not support dry run`);
  }
}

/** Whether the call failed open (its failure policy ignored a calling error). */
export type Settled<T> = { ok: true; value: T } | { ok: false };

/**
 * Runs one call and settles it: success and rejections are counted; a
 * calling error fails open under failurePolicy Ignore (logged and counted)
 * and is a 500 otherwise; a rejection or any other error goes to the client.
 */
export async function settle<T>(parts: WebhookPluginParts, type: WebhookType, hook: CompiledWebhook, request: AdmissionRequest, run: () => Promise<T>): Promise<Settled<T>> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const m = parts.metrics;
  try {
    const value = await run();
    m?.observeWebhook(hook.name, type, request.operation, false, 200, seconds());
    return { ok: true, value };
  } catch (e) {
    if (e instanceof CallingWebhookError) {
      const ignore = hook.failurePolicy === 'Ignore';
      m?.observeWebhook(hook.name, type, request.operation, !ignore, e.code, seconds());
      if (ignore) {
        parts.warn(`Failed calling webhook, failing open ${hook.name}: ${e.message}`);
        m?.observeFailOpen(hook.name, type);
        return { ok: false };
      }
      m?.observeRejection(hook.name, type, request.operation, 'calling_webhook_error', e.code);
      parts.warn(`Failed calling webhook, failing closed ${hook.name}: ${e.message}`);
      throw errors.internal(e.message);
    }
    if (e instanceof WebhookRejection) {
      m?.observeWebhook(hook.name, type, request.operation, true, e.code, seconds());
      m?.observeRejection(hook.name, type, request.operation, 'no_error', e.metricCode);
      throw e;
    }
    m?.observeWebhook(hook.name, type, request.operation, true, 0, seconds());
    m?.observeRejection(hook.name, type, request.operation, 'apiserver_internal_error', 0);
    throw e;
  }
}
