// The name segment of a proxy path (pods/{id}/proxy, services/{id}/proxy,
// nodes/{id}/proxy): `name`, `name:port` or `scheme:name:port`, as
// upstream's SplitSchemeNamePort reads it. Request info and authorization
// keep the whole segment as the name; only the proxy itself splits it.

export interface SchemeNamePort {
  /** `http`, `https`, or empty. */
  scheme: string;
  name: string;
  /** A number or a port's name, or empty; not checked here. */
  port: string;
}

const validSchemes = new Set(['', 'http', 'https']);

/** The parts of `id`, or undefined when it has more than three parts, no name, or another scheme. */
export function splitSchemeNamePort(id: string): SchemeNamePort | undefined {
  const parts = id.split(':');
  let split: SchemeNamePort;
  switch (parts.length) {
    case 1: split = { scheme: '', name: parts[0]!, port: '' }; break;
    case 2: split = { scheme: '', name: parts[0]!, port: parts[1]! }; break;
    case 3: split = { scheme: parts[0]!, name: parts[1]!, port: parts[2]! }; break;
    default: return undefined;
  }
  return split.name !== '' && validSchemes.has(split.scheme) ? split : undefined;
}

const int64Max = 2n ** 63n - 1n;
const int64Min = -(2n ** 63n);

/** `text` as Go's strconv.ParseInt(text, 10, 64) reads it (an optional sign, decimal digits, in range), or undefined. */
export function parseGoInt64(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value > int64Max || value < int64Min ? undefined : value;
}
