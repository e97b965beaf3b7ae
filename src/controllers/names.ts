// The in-process controllers' names (upstream's) and how `--controllers`
// selects them, apart from the controllers themselves: reading the flags
// does not load every controller (cli/main.ts reads them first).

/** Every controller by name, in start order; all but those of `disabledByDefault` are on by default. */
export const controllerNames = [
  'namespace', 'serviceaccount', 'garbagecollector', 'serviceaccount-token', 'root-ca-cert-publisher',
  'clusterrole-aggregation', 'csrsigning', 'csrapproving', 'csrcleaner', 'disruption', 'pod-garbage-collector',
  'endpoint', 'endpointslice', 'ttl-after-finished', 'resourcequota', 'pvc-protection', 'pv-protection', 'validatingadmissionpolicy-status', 'tokencleaner', 'bootstrapsigner',
] as const;

export type ControllerName = (typeof controllerNames)[number];

/** Controllers `*` does not turn on, as upstream's controller manager. */
export const disabledByDefault: ReadonlySet<string> = new Set<ControllerName>(['tokencleaner', 'bootstrapsigner']);

/**
 * Whether `--controllers` turns `name` on, as upstream's controller manager
 * reads it: the first entry naming it (`name` or `-name`) decides, else `*`
 * turns on every controller not disabled by default.
 */
export function controllerEnabled(name: string, selection: readonly string[]): boolean {
  for (const entry of selection) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
  }
  return selection.includes('*') && !disabledByDefault.has(name);
}

/** The reason an entry of `--controllers` is not one; undefined for a good one. */
export function badControllerEntry(entry: string): string | undefined {
  if (entry === '*' || (controllerNames as readonly string[]).includes(entry.replace(/^-/, ''))) return undefined;
  return `"${entry}" is not in the list of known controllers (${controllerNames.join(', ')})`;
}
