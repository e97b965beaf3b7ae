// The order in which versions of one group are preferred, as upstream sorts
// them (discovery lists the preferred version first): versions shaped like
// `v2`, `v1beta1`, `v1alpha3` come before any other, GA before beta before
// alpha, higher numbers first within each; other names sort by text after
// them.

const kubeLike = /^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$/;
const stability: Record<string, number> = { '': 2, beta: 1, alpha: 0 };

/** Negative when `a` is preferred to `b`, positive when `b` is, zero when they are the same. */
export function compareVersionPriority(a: string, b: string): number {
  const ma = kubeLike.exec(a);
  const mb = kubeLike.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const byStability = stability[mb[2] ?? '']! - stability[ma[2] ?? '']!;
  if (byStability !== 0) return byStability;
  const byMajor = Number(mb[1]) - Number(ma[1]);
  if (byMajor !== 0) return byMajor;
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}
