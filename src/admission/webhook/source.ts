// The webhooks of every configuration of one kind, kept compiled in memory:
// fed by an informer (no storage read per request), recompiled on the first
// request after a change. Configurations run in name order, their webhooks in
// list order, as upstream.

import { compileMatchConditions, type CompiledCondition } from './conditions.js';
import { loadCel } from '../../api/validation/index.js';
import type { KubeObject } from '../../api/kind.js';
import { labelSelectorOf, type LabelSelector } from '../../machinery/selectors.js';

/** The configurations of one kind as an informer holds them. */
export interface ConfigurationFeed {
  /** Every configuration now; the objects are read, never changed. */
  list(): readonly KubeObject[];
  /** Calls `listener` after every change. */
  onChange(listener: () => void): void;
}

export interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

export interface ServiceTarget {
  namespace: string;
  name: string;
  path: string;
  port: number;
}

export interface CompiledWebhook {
  /** Unique among the webhooks of the feed: configuration, name and a counter for repeated names. */
  uid: string;
  configurationName: string;
  name: string;
  rules: WebhookRule[];
  /** The parsed selector, or why it could not be parsed (answered when the webhook would be called). */
  namespaceSelector: LabelSelector | Error;
  objectSelector: LabelSelector | Error;
  matchPolicy: string;
  failurePolicy: string;
  sideEffects?: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy: string;
  url?: string;
  service?: ServiceTarget;
  /** PEM text of caBundle, if any. */
  caPem?: string;
  /** CEL conditions that must all hold for the webhook to be called. */
  matchConditions: CompiledCondition[];
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

function selector(raw: unknown): LabelSelector | Error {
  try {
    return labelSelectorOf(raw as Parameters<typeof labelSelectorOf>[0]);
  } catch (e) {
    return e as Error;
  }
}

/** One stored webhook, with the v1 defaults for anything missing (objects stored by older servers). */
function compile(configurationName: string, hook: Record<string, any>, uid: string): CompiledWebhook {
  const cc = hook.clientConfig ?? {};
  const service = cc.service && typeof cc.service === 'object'
    ? { namespace: String(cc.service.namespace ?? ''), name: String(cc.service.name ?? ''), path: cc.service.path || '/', port: cc.service.port ?? 443 }
    : undefined;
  return {
    uid, configurationName, name: String(hook.name ?? ''),
    rules: (Array.isArray(hook.rules) ? hook.rules : []).filter((r: unknown) => r && typeof r === 'object').map((r: Record<string, unknown>) => ({
      operations: strings(r.operations), apiGroups: strings(r.apiGroups), apiVersions: strings(r.apiVersions),
      resources: strings(r.resources), scope: typeof r.scope === 'string' ? r.scope : '*',
    })),
    namespaceSelector: selector(hook.namespaceSelector),
    objectSelector: selector(hook.objectSelector),
    matchPolicy: hook.matchPolicy ?? 'Equivalent',
    failurePolicy: hook.failurePolicy ?? 'Fail',
    sideEffects: hook.sideEffects ?? undefined,
    timeoutSeconds: hook.timeoutSeconds ?? 10,
    admissionReviewVersions: strings(hook.admissionReviewVersions),
    reinvocationPolicy: hook.reinvocationPolicy ?? 'Never',
    url: typeof cc.url === 'string' ? cc.url : undefined,
    service,
    caPem: typeof cc.caBundle === 'string' && cc.caBundle !== '' ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined,
    matchConditions: compileMatchConditions(hook.matchConditions),
  };
}

/** A webhook with its place among all the webhooks of its kind (audit annotations name it). */
export interface IndexedWebhook {
  webhook: CompiledWebhook;
  index: number;
}

export class WebhookSource {
  private compiled?: readonly CompiledWebhook[];
  /** Whether some webhook has match conditions (they compile with CEL), worked out once per change. */
  private conditional?: boolean;
  /** The webhooks whose rules can name a resource, by resource: most requests meet few or none. */
  private byResource = new Map<string, readonly IndexedWebhook[]>();

  constructor(private readonly feed: ConfigurationFeed) {
    feed.onChange(() => {
      this.compiled = undefined;
      this.byResource = new Map();
      this.conditional = undefined;
    });
  }

  /** Loads CEL when a webhook's match conditions need it, before `candidates` compiles them; undefined when nothing is to load. */
  load(): Promise<void> | undefined {
    this.conditional ??= this.feed.list().some((config) => Array.isArray(config.webhooks)
      && config.webhooks.some((h: unknown) => Array.isArray((h as { matchConditions?: unknown } | null)?.matchConditions) && (h as { matchConditions: unknown[] }).matchConditions.length > 0));
    return this.conditional ? loadCel() : undefined;
  }

  /** Every webhook, in calling order. */
  webhooks(): readonly CompiledWebhook[] {
    this.compiled ??= this.compileAll();
    return this.compiled;
  }

  /** The webhooks, in calling order, with a rule for `resource` (by name or `*`); the others cannot match it at any version. */
  candidates(resource: string): readonly IndexedWebhook[] {
    let found = this.byResource.get(resource);
    if (!found) {
      found = this.webhooks().map((webhook, index) => ({ webhook, index })).filter(({ webhook }) => webhook.rules.some((rule) => rule.resources.some((entry) => {
        const res = entry.split('/', 1)[0];
        return res === '*' || res === resource;
      })));
      this.byResource.set(resource, found);
    }
    return found;
  }

  private compileAll(): CompiledWebhook[] {
    const configs = [...this.feed.list()].sort((a, b) => {
      const x = String(a.metadata?.name ?? '');
      const y = String(b.metadata?.name ?? '');
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const out: CompiledWebhook[] = [];
    for (const config of configs) {
      const configurationName = String(config.metadata?.name ?? '');
      const seen = new Map<string, number>();
      for (const hook of Array.isArray(config.webhooks) ? config.webhooks : []) {
        if (!hook || typeof hook !== 'object') continue;
        const name = String(hook.name ?? '');
        const n = seen.get(name) ?? 0;
        seen.set(name, n + 1);
        out.push(compile(configurationName, hook, `${configurationName}/${name}/${n}`));
      }
    }
    return out;
  }
}
