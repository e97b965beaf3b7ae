// Audiences: who a token is meant for. A request to this server asks for the
// server's own audiences (--api-audiences); a TokenReview may ask for others.

/** The audiences of `a` that `b` also names, in `a`'s order. */
export function intersect(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return [...new Set(a)].filter((x) => other.has(x));
}

/** As upstream: no audiences on either side accepts; otherwise they must share one. */
export function audiencesAccepted(wanted: readonly string[], got: readonly string[] | undefined): boolean {
  if (wanted.length === 0 || !got || got.length === 0) return true;
  return intersect(wanted, got).length > 0;
}

/** A list of strings the way upstream's messages print one (`["a" "b"]`). */
export function formatList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}
