// Go's strconv.Quote (the %q verb) of a string, for text formats that upstream
// writes with it (the legacy audit line): printable characters as they are,
// the usual backslash escapes, other ASCII as \xNN and other runes as \uNNNN
// or \UNNNNNNNN. JSON.stringify differs on control characters, DEL and
// unprintable runes.

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const escapes: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\' };

export function goQuote(text: string): string {
  // The common case (names, paths, IDs) needs no escape at all.
  if (/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(text)) return `"${text}"`;
  let out = '"';
  for (const ch of text) {
    const escaped = escapes[ch];
    if (escaped !== undefined) out += escaped;
    else if (printable.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      // A lone surrogate is invalid UTF-8 in Go's string: it becomes the replacement character.
      if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
      else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return `${out}"`;
}
