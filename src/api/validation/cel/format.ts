// The `format` library of upstream's CEL environment (apiserver's
// library/format.go, 1.31+): `format.named(name)` is an optional of the
// named format (none for an unknown name), `format.<name>()` the format
// itself, and `<format>.validate(s)` an optional list of the reasons `s`
// is not of the format (none when it is). The reasons are those of the
// checks upstream calls: the name validators' messages, Go's
// url.ParseRequestURI for `uri`, and strfmt's checks with upstream's short
// messages for `uuid`, `byte`, `date` and `datetime`. A `...Prefix` format
// accepts a trailing dash, as a generateName does.

import { celFunc, celList, celMethod, CelScalar, type CelFunc } from '@bufbuild/cel';
import { isDns1035Label, isDns1123Label, isDns1123Subdomain, isLabelValue, isQualifiedName } from '../../../machinery/validation.js';
import { formatCheck } from '../formats.js';
import { optionalNone, optionalOf } from './optional.js';
import { field, opaque } from './values.js';

const { STRING, DYN } = CelScalar;

interface Format {
  check: (s: string) => string[];
  /** Upstream's MaxRegexSize, which its cost of `validate` is computed from. */
  regexSize: number;
}

/** Upstream's maskTrailingDash: a prefix may end in a dash, checked as if that ended in a letter. */
const maskTrailingDash = (s: string): string => (s.length > 1 && s.endsWith('-') ? `${s.slice(0, -2)}a` : s);

const strfmt = (name: string, message: string) => (s: string): string[] => (formatCheck(name)!(s) ? [] : [message]);

const formats = new Map<string, Format>([
  ['dns1123Label', { check: isDns1123Label, regexSize: 30 }],
  ['dns1123Subdomain', { check: isDns1123Subdomain, regexSize: 60 }],
  ['dns1035Label', { check: isDns1035Label, regexSize: 30 }],
  ['qualifiedName', { check: isQualifiedName, regexSize: 60 }],
  ['dns1123LabelPrefix', { check: (s) => isDns1123Label(maskTrailingDash(s)), regexSize: 30 }],
  ['dns1123SubdomainPrefix', { check: (s) => isDns1123Subdomain(maskTrailingDash(s)), regexSize: 60 }],
  ['dns1035LabelPrefix', { check: (s) => isDns1035Label(maskTrailingDash(s)), regexSize: 30 }],
  ['labelValue', { check: isLabelValue, regexSize: 40 }],
  // Upstream sizes uri by govalidator's URL pattern (over a thousand characters); this is an estimate of it.
  ['uri', { check: requestUriErrors, regexSize: 1200 }],
  ['uuid', { check: strfmt('uuid', 'does not match the UUID format'), regexSize: 85 }],
  ['byte', { check: strfmt('byte', 'invalid base64'), regexSize: 84 }],
  ['date', { check: strfmt('date', 'invalid date'), regexSize: 71 }],
  ['datetime', { check: strfmt('datetime', 'invalid datetime'), regexSize: 71 }],
]);

const formatValue = (name: string) => opaque('format', { name });

/** The regex size upstream's cost of `<format>.validate(s)` multiplies, or undefined when `v` is no format. */
export function formatRegexSize(v: unknown): number | undefined {
  try { return formats.get(field<string>(v as never, 'format', 'name'))?.regexSize; } catch { return undefined; }
}

export const formatLib: CelFunc[] = [
  ...[...formats.keys()].map((name) => celFunc(`format.${name}`, [], DYN, () => formatValue(name))),
  celFunc('format.named', [STRING], DYN, (name) => (formats.has(name) ? optionalOf(formatValue(name)) : optionalNone())),
  celMethod('validate', DYN, [STRING], DYN, function (s) {
    const errs = formats.get(field<string>(this, 'format', 'name'))!.check(s);
    return errs.length ? optionalOf(celList(errs)) : optionalNone();
  }),
];

/** Go's url.ParseRequestURI, for the errors it gives (`parse "x": invalid URI for request`). */
function requestUriErrors(s: string): string[] {
  const fail = (why: string) => [`parse ${JSON.stringify(s)}: ${why}`];
  if (/[\u0000-\u001f\u007f]/.test(s)) return fail('net/url: invalid control character in URL');
  if (s === '') return fail('empty url');
  let scheme = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) { if (i === 0) break; continue; }
    if (c === ':') {
      if (i === 0) return fail('missing protocol scheme');
      scheme = s.slice(0, i);
    }
    break;
  }
  let rest = scheme ? s.slice(scheme.length + 1) : s;
  const q = rest.indexOf('?');
  if (q >= 0) rest = rest.slice(0, q);
  if (!rest.startsWith('/')) return scheme ? [] : fail('invalid URI for request');
  if (scheme && rest.startsWith('//')) {
    const authority = rest.slice(2).split('/')[0]!;
    const host = authority.slice(authority.lastIndexOf('@') + 1);
    const bad = /[^A-Za-z0-9\-._~!$&'()*+,;=:[\]%]/.exec(host);
    if (bad) return fail(`invalid character ${JSON.stringify(bad[0])} in host name`);
    const port = /^(?:\[[^\]]*\]|[^:]*)(:.*)?$/.exec(host)?.[1];
    if (port !== undefined && !/^:\d*$/.test(port)) return fail(`invalid port ${JSON.stringify(port)} after host`);
  }
  return [];
}
