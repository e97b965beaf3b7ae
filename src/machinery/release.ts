// The upstream release whose API this server speaks. Removed versions, the
// deprecation wording, feature gate stages and hidden metrics are all judged
// against it; kubectl compares its minor for version skew.

export const compatibleRelease = { major: '1', minor: '32', patch: '0' } as const;

/** `1.32`: how releases are written in removal records, metric labels and audit annotations. */
export const compatibleMinor = `${compatibleRelease.major}.${compatibleRelease.minor}`;

/** `1.25` -> [1, 25]; undefined for anything else. */
export function parseMinor(release: string): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Whether `release` (`1.25`) is this release or an earlier one. */
export function reachedBy(release: string): boolean {
  const r = parseMinor(release);
  if (!r) return false;
  const major = Number(compatibleRelease.major);
  return r[0] < major || (r[0] === major && r[1] <= Number(compatibleRelease.minor));
}
