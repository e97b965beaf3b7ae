// ValidatingAdmissionWebhook: every matching validating webhook, all at once
// in the validating phase; the request goes on only if every one allows it
// (or failed open under failurePolicy Ignore). The first rejection in
// configuration order is the one the client gets.

import { vocabulary } from '../../machinery/vocabulary.js';
import { addAuditAnnotation, addWarning, type AdmissionPlugin, type AdmissionRequest } from '../types.js';
import { checkDryRun, settle, type WebhookPluginParts } from './dispatch.js';
import { rejectionError } from './errors.js';
import { qualifiedOf } from '../errors.js';
import { exemptFromWebhooks, type Invocation, type NamespaceLabelCache } from './matcher.js';
import type { IndexedWebhook } from './source.js';
import { convertAheadFor, versioned } from './review.js';

export class ValidatingAdmissionWebhook implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionWebhook';
  constructor(private readonly parts: WebhookPluginParts) {}

  /** Without a webhook for the resource (most writes) the chain goes on at once, without a promise. */
  validate(request: AdmissionRequest): Promise<void> | undefined {
    if (exemptFromWebhooks(request, this.parts.configurationGroup)) return undefined;
    const loading = this.parts.source.load();
    if (loading) return loading.then(() => this.validate(request));
    const hooks = this.parts.source.candidates(qualifiedOf(request).resource);
    return hooks.length === 0 ? undefined : this.validateWith(hooks, request);
  }

  private async validateWith(hooks: readonly IndexedWebhook[], request: AdmissionRequest): Promise<void> {
    const cache: NamespaceLabelCache = new Map();
    const invocations: Invocation[] = [];
    for (const { webhook: hook } of hooks) {
      const invocation = this.parts.matcher.byRules(hook, request);
      if (!invocation) continue;
      await convertAheadFor(invocation, request);
      if (await this.parts.matcher.selected(invocation, request, cache)) invocations.push(invocation);
    }
    if (invocations.length === 0) return;
    const failures = await Promise.all(invocations.map(async (invocation, index) => {
      const hook = invocation.webhook;
      try {
        const outcome = await settle(this.parts, 'validating', hook, request, () => this.call(invocation, request));
        if (!outcome.ok) addAuditAnnotation(request, `${vocabulary.validationFailedOpenAnnotationPrefix}round_0_index_${index}`, hook.name);
        return undefined;
      } catch (e) {
        return { error: e };
      }
    }));
    const first = failures.find((f) => f !== undefined);
    if (first) throw first.error;
  }

  private async call(invocation: Invocation, request: AdmissionRequest): Promise<void> {
    const hook = invocation.webhook;
    checkDryRun(hook, request);
    const { response } = await this.parts.caller.call(invocation, request, false, versioned(request.object, invocation, request));
    for (const [key, value] of response.auditAnnotations) addAuditAnnotation(request, `${hook.name}/${key}`, value);
    for (const warning of response.warnings) addWarning(request, warning);
    if (!response.allowed) throw rejectionError(request, hook.name, response.status);
  }
}
