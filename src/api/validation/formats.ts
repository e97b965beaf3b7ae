// The string formats upstream checks in custom resource schemas (kube-openapi's
// strfmt registry, as apiextensions keeps it): a format upstream does not
// support is ignored, as upstream strips it. Names are compared without
// dashes, as go-openapi normalizes them (`date-time` is `datetime`).

import { isIP } from 'node:net';

type FormatCheck = (value: string) => boolean;

const uuid = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const uuid5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const hostname = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const mac = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/;
const hexcolor = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const rgbcolor = /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const ssn = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const bsonObjectId = /^[0-9a-fA-F]{24}$/;
const email = /^[^@\s]+@[^@\s]+$/;
const shortName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const longName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const date = /^(\d{4})-(\d{2})-(\d{2})$/;
// RFC 3339 date-time, the layouts strfmt accepts (fractions optional, zone optional as ISO8601 local time).
const dateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/;
// Go's time.ParseDuration: a sequence of decimal numbers with units, optionally signed; or Scala's `<n> <unit>`.
const goDuration = /^[-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))*$|^[-+]?0$/;
const scalaDuration = /^\d+\s*(ns|us|ms|s|m|h|d|w|nanos?|nanoseconds?|micros?|microseconds?|millis?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$/i;
// Kubernetes quantity: a signed decimal number with a binary or decimal suffix or an exponent.
const quantity = /^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

function validDate(y: string, m: string, d: string): boolean {
  const mm = Number(m), dd = Number(d);
  if (mm < 1 || mm > 12 || dd < 1) return false;
  const days = new Date(Date.UTC(Number(y), mm, 0)).getUTCDate();
  return dd <= days;
}

function isUri(v: string): boolean {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path, no fragment handling of its own.
  if (v.startsWith('/')) return !/\s/.test(v);
  try { return new URL(v).protocol.length > 1; } catch { return false; }
}

function isCidr(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return false;
  const ip = v.slice(0, slash), bits = v.slice(slash + 1);
  const family = isIP(ip);
  if (!family || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

function isbn10(v: string): boolean {
  const s = v.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (s[i] === 'X' ? 10 : Number(s[i])) * (10 - i);
  return sum % 11 === 0;
}

function isbn13(v: string): boolean {
  const s = v.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(s[i]) * (i % 2 ? 3 : 1);
  return sum % 10 === 0;
}

function luhn(v: string): boolean {
  const s = v.replace(/\D/g, '');
  if (s.length < 12 || s.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < s.length; i++) {
    let d = Number(s[s.length - 1 - i]);
    if (i % 2) { d *= 2; if (d > 9) d -= 9; }
    sum += d;
  }
  return sum % 10 === 0;
}

const checks: Record<string, FormatCheck> = {
  bsonobjectid: (v) => bsonObjectId.test(v),
  uri: isUri,
  email: (v) => email.test(v),
  hostname: (v) => v.length <= 255 && hostname.test(v),
  ipv4: (v) => isIP(v) === 4,
  ipv6: (v) => isIP(v) === 6,
  cidr: isCidr,
  mac: (v) => mac.test(v),
  uuid: (v) => uuid.test(v),
  uuid3: (v) => uuid3.test(v),
  uuid4: (v) => uuid4.test(v),
  uuid5: (v) => uuid5.test(v),
  isbn: (v) => isbn10(v) || isbn13(v),
  isbn10,
  isbn13,
  creditcard: luhn,
  ssn: (v) => ssn.test(v),
  hexcolor: (v) => hexcolor.test(v),
  rgbcolor: (v) => rgbcolor.test(v),
  byte: (v) => v === '' || base64.test(v),
  password: () => true,
  date: (v) => { const m = date.exec(v); return !!m && validDate(m[1]!, m[2]!, m[3]!); },
  duration: (v) => goDuration.test(v) || scalaDuration.test(v),
  datetime: (v) => {
    const m = dateTime.exec(v);
    return !!m && validDate(m[1]!, m[2]!, m[3]!) && Number(m[4]) <= 23 && Number(m[5]) <= 59 && Number(m[6]) <= 59;
  },
  quantity: (v) => quantity.test(v),
  k8sshortname: (v) => v.length <= 63 && shortName.test(v),
  k8slongname: (v) => v.length <= 253 && longName.test(v),
};

/** The check of a string format upstream enforces, or undefined where upstream ignores the format. */
export function formatCheck(format: string): FormatCheck | undefined {
  const name = format.replace(/-/g, '');
  return Object.prototype.hasOwnProperty.call(checks, name) ? checks[name] : undefined;
}
