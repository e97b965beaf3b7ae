// How each metric of ours is declared, as upstream's metric framework does:
// with its stability level and, once deprecated, the release that
// deprecated it. The help text says both (`[STABLE] ...`, `[ALPHA]
// (Deprecated since 1.32.0) ...`); a metric deprecated in an earlier release
// is hidden (never registered), unless it was deprecated in the previous
// minor and --show-hidden-metrics-for-version names that minor. Here, below
// every folder that declares metrics; server/metrics.ts serves them.

import type { Registry } from 'prom-client';
import { compatibleRelease, parseMinor } from './release.js';

export type StabilityLevel = 'INTERNAL' | 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricDeclaration {
  /** Absent: ALPHA, as upstream. */
  stability?: StabilityLevel;
  /** The release that deprecated the metric (`1.31.0`). */
  deprecatedVersion?: string;
}

/** A --show-hidden-metrics-for-version the server refuses to start with; the message is the one line the CLI prints. */
export class MetricsConfigError extends Error {
  override name = 'MetricsConfigError';
}

const currentMinor = Number(compatibleRelease.minor);
export const previousMinor = `${compatibleRelease.major}.${currentMinor - 1}`;

/** Registries whose server shows the previous minor's hidden metrics. */
const showingHidden = new WeakSet<Registry>();

/** From now on, metrics deprecated in the previous minor are registered with `registry`. */
export function showHiddenMetrics(registry: Registry): void {
  showingHidden.add(registry);
}

/** Whether a metric deprecated in `deprecatedVersion` is hidden on a server with this registry. */
function hidden(registry: Registry, deprecatedVersion: string | undefined): boolean {
  const deprecated = deprecatedVersion === undefined ? undefined : parseMinor(deprecatedVersion);
  if (!deprecated) return false;
  const [major, minor] = deprecated;
  const before = major < Number(compatibleRelease.major) || (major === Number(compatibleRelease.major) && minor < currentMinor);
  if (!before) return false;
  return !(showingHidden.has(registry) && `${major}.${minor}` === previousMinor);
}

/**
 * The options of a prom-client metric declared with its stability and
 * deprecation: its help text annotated as upstream's, registered with
 * `registry` unless hidden.
 */
export function declareMetric<T extends { name: string; help: string }>(registry: Registry, declaration: T & MetricDeclaration): T & { registers: Registry[] } {
  const { stability = 'ALPHA', deprecatedVersion, ...options } = declaration;
  const help = `[${stability}] ${deprecatedVersion ? `(Deprecated since ${deprecatedVersion}) ` : ''}${options.help}`;
  return { ...(options as unknown as T), help, registers: hidden(registry, deprecatedVersion) ? [] : [registry] };
}
