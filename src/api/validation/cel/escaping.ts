// Property names as CEL reads them, upstream's escaping
// (k8s.io/apiserver/pkg/cel/escaping.go): a name that is a CEL reserved word
// is written `__name__`; `__`, `.`, `-` and `/` inside a name are written
// `__underscores__`, `__dot__`, `__dash__`, `__slash__`; a name starting with
// a digit or holding any other character cannot be read by a rule at all.
// The cost estimator sizes `self.__namespace__` by the `namespace` property
// and the run time reads that property, so both must use these two functions.

const reservedWords = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import',
  'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

const escapes: Record<string, string> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };
const unescapes: Record<string, string> = { underscores: '__', dot: '.', dash: '-', slash: '/' };

/** The CEL name of property `name`, or undefined when no rule can name it. */
export function escapePropertyName(name: string): string | undefined {
  if (name === '' || (name[0]! >= '0' && name[0]! <= '9')) return undefined;
  if (reservedWords.has(name)) return `__${name}__`;
  if (!/^[A-Za-z0-9_.\-/]*$/.test(name)) return undefined;
  return name.replace(/__|[.\-/]/g, (m) => escapes[m]!);
}

/** The property a CEL name stands for, or undefined when its escapes are not upstream's. */
export function unescapePropertyName(escaped: string): string | undefined {
  let ok = true;
  const name = escaped.replace(/__[^_]+__/g, (m) => {
    const inner = m.slice(2, -2);
    const plain = unescapes[inner];
    if (plain !== undefined) return plain;
    // A reserved word is escaped only as the whole name.
    if (reservedWords.has(inner) && m.length === escaped.length) return inner;
    ok = false;
    return '';
  });
  return ok ? name : undefined;
}

/** Whether some property of `names` is read by rules under another name. */
export function needsEscaping(names: Iterable<string>): boolean {
  for (const n of names) if (escapePropertyName(n) !== n) return true;
  return false;
}
