// Duplicate keys in JSON text: JSON.parse silently keeps the last one, but
// fieldValidation must report them (Warn) or refuse them (Strict). A single
// pass over the text, run only when the answer matters.

/** Paths (`data.a`, `items[2].name`) of keys that appear twice in one object. Assumes valid JSON. */
export function findDuplicateFields(text: string): string[] {
  const found: string[] = [];
  let i = 0;

  const skipWs = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const readString = (): string => {
    const start = ++i; // after the opening quote
    let escaped = false;
    while (i < text.length) {
      const c = text[i];
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') break;
      i++;
    }
    const raw = text.slice(start - 1, ++i);
    try { return JSON.parse(raw) as string; } catch { return raw; }
  };
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

  const value = (path: string): void => {
    skipWs();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      skipWs();
      if (text[i] === '}') { i++; return; }
      for (;;) {
        skipWs();
        const key = readString();
        if (seen.has(key)) found.push(join(path, key));
        seen.add(key);
        skipWs();
        i++; // ':'
        value(join(path, key));
        skipWs();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      skipWs();
      if (text[i] === ']') { i++; return; }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`);
        skipWs();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      readString();
    } else {
      while (i < text.length && !',}] \t\n\r'.includes(text[i])) i++;
    }
  };

  value('');
  return found;
}
