// MutatingAdmissionWebhook: the matching mutating webhooks, one after
// another in the mutating phase, each able to change the object with a JSON
// patch (checked against the kind's schema and defaulted again). A webhook
// with reinvocationPolicy IfNeeded is called once more, in a second round,
// when a later webhook or plugin changed the object after it ran. Every call
// leaves audit annotations: whether it mutated, and the patch.

import { errors, isApiError } from '../../machinery/errors.js';
import { deepEqual } from '../../machinery/equal.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import { jsonTextExceedsDepth, maxNestingDepth } from '../../machinery/limits.js';
import { applyJsonPatch, decodeJsonPatch, type JsonPatchOperation } from '../../machinery/patch/index.js';
import { asStored, decodeObject } from '../../api/decode.js';
import type { KubeObject } from '../../api/kind.js';
import type { VersionCodec } from '../../api/codec.js';
import { addAuditAnnotation, addWarning, type AdmissionPlugin, type AdmissionRequest, type MutationRound } from '../types.js';
import { checkDryRun, settle, type WebhookPluginParts } from './dispatch.js';
import { CallingWebhookError, rejectionError } from './errors.js';
import { qualifiedOf } from '../errors.js';
import { exemptFromWebhooks, type Invocation, type NamespaceLabelCache } from './matcher.js';
import type { IndexedWebhook } from './source.js';
import { convertAheadFor, invocationCodec, versioned } from './review.js';

const pluginName = 'MutatingAdmissionWebhook';

/** Which webhooks a second round calls again (upstream's webhookReinvokeContext). */
class Reinvocation {
  /** The object after this plugin's last round, when a later change could matter. */
  lastOutput?: KubeObject;
  /** IfNeeded webhooks called since the object last changed. */
  readonly previouslyInvoked = new Set<string>();
  /** Webhooks to call in the second round. */
  readonly toReinvoke = new Set<string>();

  /** The object changed: every IfNeeded webhook called before the change sees it again. */
  requireReinvokingPrevious(): void {
    for (const uid of this.previouslyInvoked) this.toReinvoke.add(uid);
    this.previouslyInvoked.clear();
  }
}

interface Decoded {
  ops: JsonPatchOperation[];
  /** The patch as the webhook sent it, for the audit annotation. */
  raw: unknown;
}

export class MutatingAdmissionWebhook implements AdmissionPlugin {
  readonly name = pluginName;
  constructor(private readonly parts: WebhookPluginParts) {}

  /** Without a webhook for the resource (most writes) the chain goes on at once, without a promise. */
  mutate(request: AdmissionRequest, round: MutationRound): Promise<void> | undefined {
    if (exemptFromWebhooks(request, this.parts.configurationGroup)) return undefined;
    const loading = this.parts.source.load();
    if (loading) return loading.then(() => this.mutate(request, round));
    const hooks = this.parts.source.candidates(qualifiedOf(request).resource);
    return hooks.length === 0 ? undefined : this.mutateWith(hooks, request, round);
  }

  private async mutateWith(hooks: readonly IndexedWebhook[], request: AdmissionRequest, round: MutationRound): Promise<void> {
    const state = round.state(pluginName, () => new Reinvocation());
    // Another plugin changed the object after our first round: webhooks that asked to see such changes run again.
    if (round.reinvoke && state.lastOutput !== undefined && !deepEqual(state.lastOutput, request.object)) state.requireReinvokingPrevious();
    const cache: NamespaceLabelCache = new Map();
    try {
      for (const { webhook: hook, index } of hooks) {
        const invocation = this.parts.matcher.byRules(hook, request);
        if (!invocation) continue;
        await convertAheadFor(invocation, request);
        if (!(await this.parts.matcher.selected(invocation, request, cache))) continue;
        // A second round only calls webhooks again; one skipped in the first round stays skipped.
        if (round.reinvoke && !state.toReinvoke.has(hook.uid)) continue;
        const outcome = await settle(this.parts, 'admit', hook, request, () => this.call(invocation, request, round.reinvoke ? 1 : 0, index));
        if (outcome.ok && outcome.value) {
          state.requireReinvokingPrevious();
          round.requestReinvocation();
        }
        if (hook.reinvocationPolicy === 'IfNeeded') state.previouslyInvoked.add(hook.uid);
        if (!outcome.ok) addAuditAnnotation(request, `${vocabulary.mutationFailedOpenAnnotationPrefix}round_${round.reinvoke ? 1 : 0}_index_${index}`, hook.name);
      }
    } finally {
      state.lastOutput = state.previouslyInvoked.size > 0 && request.object !== undefined ? structuredClone(request.object) : undefined;
    }
  }

  /** One call; answers whether the webhook changed the object. */
  private async call(invocation: Invocation, request: AdmissionRequest, round: number, index: number): Promise<boolean> {
    const hook = invocation.webhook;
    const at = `round_${round}_index_${index}`;
    let mutated = false;
    try {
      checkDryRun(hook, request);
      const sent = versioned(request.object, invocation, request);
      const { response } = await this.parts.caller.call(invocation, request, true, sent);
      for (const [key, value] of response.auditAnnotations) addAuditAnnotation(request, `${hook.name}/${key}`, value);
      for (const warning of response.warnings) addWarning(request, warning);
      if (!response.allowed) throw rejectionError(request, hook.name, response.status);
      if (!response.patch) return false;
      const patch = decodePatch(hook.name, response.patch);
      if (patch.ops.length === 0) return false;
      if (request.object === undefined || sent === undefined) {
        throw errors.internal(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`);
      }
      if (response.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type "${response.patchType}"`, 403);
      const patched = await this.decodePatched(hook.name, request, sent, patch.ops, invocationCodec(invocation, request));
      mutated = !deepEqual(request.object, patched);
      addAuditAnnotation(request, `${vocabulary.patchAnnotationPrefix}${at}`,
        JSON.stringify({ configuration: hook.configurationName, webhook: hook.name, patch: patch.raw, patchType: 'JSONPatch' }), 'Request');
      request.object = patched;
      return mutated;
    } finally {
      addAuditAnnotation(request, `${vocabulary.mutationAnnotationPrefix}${at}`,
        JSON.stringify({ configuration: hook.configurationName, webhook: hook.name, mutated }));
    }
  }

  /**
   * The patched object, read as the schema of the version it was sent at
   * reads a body, converted back to the stored version and defaulted again;
   * what fails is the server's 500, as upstream.
   */
  private async decodePatched(webhook: string, request: AdmissionRequest, sent: KubeObject, ops: JsonPatchOperation[], codec?: VersionCodec): Promise<KubeObject> {
    let patched: unknown;
    try {
      patched = applyJsonPatch(sent, ops);
    } catch (e) {
      if (isApiError(e)) throw errors.internal(e.details?.causes?.[0]?.message ?? e.message);
      throw e;
    }
    const kind = request.kind;
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
      throw errors.internal(`admission webhook "${webhook}" patched the object into something that is not an object`);
    }
    const p = patched as KubeObject;
    if (p.apiVersion !== sent.apiVersion || p.kind !== sent.kind) {
      throw errors.internal(`admission webhook "${webhook}" changed the object's apiVersion or kind to ${String(p.apiVersion)}, ${String(p.kind)}`);
    }
    try {
      // Labelled as sent: only its fields are judged, as a body of that version.
      const { apiVersion: _v, kind: _k, ...fields } = p;
      const decoded = decodeObject(codec?.served ?? kind, fields, { fieldValidation: 'Ignore', warnings: [] });
      // At a version converted later (a conversion webhook), back to the stored one in a review of its own.
      await codec?.aheadToStored(decoded);
      return asStored(kind, decoded, codec);
    } catch (e) {
      if (isApiError(e)) throw errors.internal(e.message);
      throw e;
    }
  }
}

function decodePatch(webhook: string, bytes: Buffer): Decoded {
  const text = bytes.toString('utf8');
  try {
    if (jsonTextExceedsDepth(text)) throw new Error(`nested deeper than ${maxNestingDepth} levels`);
    const raw: unknown = JSON.parse(text);
    return { ops: decodeJsonPatch(raw), raw };
  } catch (e) {
    throw new CallingWebhookError(webhook, `received undecodable patch in webhook response: ${(e as Error).message}`);
  }
}
