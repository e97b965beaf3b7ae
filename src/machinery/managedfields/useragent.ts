// Field manager names: the default for writes that name none comes from the
// User-Agent, as upstream takes it (the part before the first '/', printable
// characters only, at most 128 bytes), and the rules a name must follow.

import { FieldError, fieldErrors } from '../errors.js';

export const fieldManagerMaxLength = 128;

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Printable ASCII only (every one of them is printable above, and one byte): the common name, checked in one test. */
const printableAscii = /^[\x20-\x7e]*$/;

/** `kubectl/v1.32.4 (linux/amd64) kubernetes/abc` -> `kubectl`. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0];
  if (printableAscii.test(prefix)) return prefix.slice(0, fieldManagerMaxLength);
  let out = '', bytes = 0;
  for (const ch of prefix) {
    if (!printable.test(ch)) continue;
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > fieldManagerMaxLength) break;
    out += ch;
    bytes += size;
  }
  return out;
}

/** The explicit manager, or the default from the User-Agent. */
export function managerOrUserAgent(manager: string | undefined, userAgent: string | undefined): string {
  return manager ? manager : managerFromUserAgent(userAgent);
}

/** Validation of a `fieldManager` value (query parameter or managedFields entry). */
export function validateFieldManager(name: string, path = 'fieldManager'): FieldError[] {
  if (name.length <= fieldManagerMaxLength && printableAscii.test(name)) return [];
  const errs: FieldError[] = [];
  if (Buffer.byteLength(name, 'utf8') > fieldManagerMaxLength) errs.push(fieldErrors.tooLong(path, fieldManagerMaxLength));
  let position = 0;
  for (const ch of name) {
    if (!printable.test(ch)) {
      const cp = ch.codePointAt(0)!;
      errs.push(fieldErrors.invalid(path, name, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${position})`));
    }
    position += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}
