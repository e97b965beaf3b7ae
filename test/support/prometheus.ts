// A small strict parser of the Prometheus text format (0.0.4), for tests
// that scrape /metrics: every sample must belong to a family declared by
// # TYPE, label values must be well quoted and escaped, values must be
// numbers. Anything else throws, naming the line.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: Sample[];
}

const nameRe = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNameRe = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Values are read as Go's ParseFloat reads them: Inf and NaN in any case. */
function parseValue(text: string, line: number): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

/** Parses `{a="x",b="y"}` starting at `i` (the brace); returns the labels and the index after the closing brace. */
function parseLabels(text: string, i: number, line: number): [Record<string, string>, number] {
  const labels: Record<string, string> = Object.create(null);
  i++;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without =`);
    const name = text.slice(i, eq);
    if (!labelNameRe.test(name)) throw new Error(`line ${line}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`line ${line}: label ${name} repeated`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`line ${line}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const n = text[j + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape \\${n}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`line ${line}: expected , or } after a label`);
  }
  return [labels, i + 1];
}

/** The family a sample name belongs to, given the declared families. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name);
  if (direct) return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // a plain comment
      const [, what, name, rest] = m;
      if (!nameRe.test(name!)) throw new Error(`line ${line}: bad metric name ${JSON.stringify(name)}`);
      let f = families.get(name!);
      if (what === 'TYPE') {
        if (!types.has(rest!)) throw new Error(`line ${line}: bad type ${JSON.stringify(rest)}`);
        if (f?.samples.length) throw new Error(`line ${line}: TYPE after samples of ${name}`);
        if (f && f.type !== 'untyped') throw new Error(`line ${line}: second TYPE for ${name}`);
        if (f) f.type = rest as Family['type'];
        else families.set(name!, { name: name!, type: rest as Family['type'], samples: [] });
      } else {
        if (!f) { f = { name: name!, type: 'untyped', samples: [] }; families.set(name!, f); }
        f.help = rest;
      }
      return;
    }
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`line ${line}: not a sample: ${JSON.stringify(raw)}`);
    const name = raw.slice(0, nameEnd);
    if (!nameRe.test(name)) throw new Error(`line ${line}: bad metric name ${JSON.stringify(name)}`);
    let labels: Record<string, string> = Object.create(null);
    let i = nameEnd;
    if (raw[i] === '{') [labels, i] = parseLabels(raw, i, line);
    if (raw[i] !== ' ') throw new Error(`line ${line}: expected a space before the value`);
    const parts = raw.slice(i + 1).split(' ');
    if (parts.length < 1 || parts.length > 2) throw new Error(`line ${line}: expected a value and an optional timestamp`);
    const value = parseValue(parts[0]!, line);
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1]!)) throw new Error(`line ${line}: bad timestamp`);
    const family = familyOf(name, families);
    if (!family) throw new Error(`line ${line}: sample ${name} of no declared family`);
    if (family.type === 'histogram' && name.endsWith('_bucket') && labels.le === undefined) throw new Error(`line ${line}: bucket without le`);
    family.samples.push({ name, labels, value });
  });
  return families;
}

/** Samples named `name` whose labels include `match`. */
export function samples(families: Map<string, Family>, name: string, match: Record<string, string> = {}): Sample[] {
  const family = familyOf(name, families);
  if (!family) return [];
  return family.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** The one sample named `name` with exactly these labels (missing: undefined). */
export function value(families: Map<string, Family>, name: string, labels: Record<string, string>): number | undefined {
  const found = samples(families, name, labels).filter((s) => Object.keys(s.labels).length === Object.keys(labels).length);
  if (found.length > 1) throw new Error(`${name} has ${found.length} samples with ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
