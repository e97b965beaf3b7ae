// A Kubernetes quantity as an exact fraction, enough for the CEL quantity
// library's comparisons and arithmetic: `1.5Gi`, `100m`, `2e3`.

export interface Quantity { num: bigint; den: bigint }

const suffixes: Record<string, [bigint, bigint]> = {
  '': [1n, 1n], n: [1n, 10n ** 9n], u: [1n, 10n ** 6n], m: [1n, 1000n], k: [1000n, 1n], M: [10n ** 6n, 1n], G: [10n ** 9n, 1n],
  T: [10n ** 12n, 1n], P: [10n ** 15n, 1n], E: [10n ** 18n, 1n], Ki: [1024n, 1n], Mi: [1024n ** 2n, 1n], Gi: [1024n ** 3n, 1n],
  Ti: [1024n ** 4n, 1n], Pi: [1024n ** 5n, 1n], Ei: [1024n ** 6n, 1n],
};

const re = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

export function parseQuantity(s: string): Quantity | undefined {
  const m = re.exec(s);
  if (!m) return undefined;
  const [int, frac = ''] = m[2]!.split('.');
  let num = BigInt((int || '0') + frac) * (m[1] === '-' ? -1n : 1n);
  let den = 10n ** BigInt(frac.length);
  const suffix = m[3] ?? '';
  if (/^[eE]/.test(suffix)) {
    const exp = Number(suffix.slice(1));
    if (Math.abs(exp) > 100) return undefined;
    if (exp >= 0) num *= 10n ** BigInt(exp); else den *= 10n ** BigInt(-exp);
  } else {
    const [mul, div] = suffixes[suffix]!;
    num *= mul; den *= div;
  }
  return { num, den };
}
