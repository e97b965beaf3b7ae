// The three signals of a request to a deprecated version (the spec's
// "Deprecation rules", upstream since 1.19): a Warning header in upstream's
// wording, the `<domain>/deprecated` and `<domain>/removed-release` audit
// annotations, and `apiserver_requested_deprecated_apis` set to 1 for the
// resource asked. What a REST object signals is worked out once and kept
// beside it, so a request to a current version pays one map lookup.

import { Gauge, type Registry as MetricRegistry } from 'prom-client';
import { apiVersionOf, declaredVersion, type KindVersion } from '../api/kind.js';
import type { AuditAnnotation } from '../admission/types.js';
import { productKey } from '../machinery/vocabulary.js';
import { warningHeader } from './negotiation.js';
import type { RestObject } from '../registry/rest.js';
import type { RequestContext } from './filters.js';
import { declareMetric } from '../machinery/metricdeclaration.js';

export const deprecatedAnnotation = productKey('deprecated');
export const removedReleaseAnnotation = productKey('removed-release');

/**
 * Upstream's warning: `<group>/<version> <Kind> is deprecated in v1.X+,
 * unavailable in v1.Y+; use <replacement>`, each part only when declared; a
 * version's own `deprecationWarning` replaces it.
 */
export function deprecationWarning(apiVersion: string, kind: string, v: Pick<KindVersion, 'deprecationWarning' | 'deprecatedRelease' | 'removedRelease' | 'replacement'>): string {
  if (v.deprecationWarning) return v.deprecationWarning;
  let text = `${apiVersion} ${kind} is deprecated`;
  if (v.deprecatedRelease) text += ` in v${v.deprecatedRelease}+`;
  if (v.removedRelease) text += `, unavailable in v${v.removedRelease}+`;
  if (v.replacement) text += `; use ${v.replacement}`;
  return text;
}

interface Signals {
  warning: string[];
  annotations: [string, AuditAnnotation][];
  labels: [string, string, string, string, string];
}

export class DeprecatedApis {
  private readonly gauge: Gauge;
  /** Per REST object: its signals, or null for a current version. */
  private readonly known = new WeakMap<RestObject, Signals | null>();

  constructor(registry: MetricRegistry) {
    this.gauge = new Gauge(declareMetric(registry, {
      name: 'apiserver_requested_deprecated_apis',
      help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: [...labelNames], stability: 'STABLE',
    }));
  }

  /** Signals a request served by `rest` when its version is deprecated: header now, annotations for the audit event, the gauge. */
  observe(rest: RestObject, ctx: RequestContext): void {
    let signals = this.known.get(rest);
    if (signals === undefined) this.known.set(rest, (signals = signalsOf(rest)));
    if (signals === null) return;
    ctx.res.setHeader('Warning', signals.warning);
    for (const [key, annotation] of signals.annotations) ctx.auditAnnotations?.set(key, annotation);
    this.gauge.set(Object.fromEntries(signals.labels.map((value, i) => [labelNames[i], value])), 1);
  }
}

const labelNames = ['group', 'version', 'resource', 'subresource', 'removed_release'] as const;

function signalsOf(rest: RestObject): Signals | null {
  const d = rest.describe;
  const v = declaredVersion(d.parentKind, d.group, d.version);
  if (!v?.deprecated) return null;
  const removed = v.removedRelease ?? '';
  return {
    warning: warningHeader([deprecationWarning(apiVersionOf(d), d.parentKind.kind, v)]),
    annotations: [
      [deprecatedAnnotation, { value: 'true', level: 'Metadata' }],
      ...(removed ? [[removedReleaseAnnotation, { value: removed, level: 'Metadata' }] as [string, AuditAnnotation]] : []),
    ],
    labels: [d.group, d.version, d.resource, d.subresource ?? '', removed],
  };
}
