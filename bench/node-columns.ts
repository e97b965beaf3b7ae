// One table from two bench results files run on different Node lines (the
// full run on the machine's Node, a --quick run on the newest pinned line):
// a result column per Node version. A quick run names smaller counts in its
// metrics, so rows are paired by their metric with the numbers masked, in
// order; a row the other run lacks shows a dash.
// Usage: node dist/bench/node-columns.js <results.md> <other results.md> > table.md

import { readFileSync } from 'node:fs';

interface Parsed {
  label: string;
  rows: { metric: string; result: string; target: string }[];
}

function parse(path: string): Parsed {
  const text = readFileSync(path, 'utf8');
  const node = /Node (v\d+\.\d+\.\d+)/.exec(text)?.[1];
  if (!node) throw new Error(`${path}: no "Node vX.Y.Z" in its header`);
  const quick = /--quick/.test(text.split('\n')[0] ?? '');
  const rows = [];
  for (const line of text.split('\n')) {
    // Cells may hold escaped pipes (\|).
    const cells = line.match(/^\| (.*) \|$/)?.[1]?.split(/ (?<!\\)\| /);
    if (!cells || cells.length !== 3 || cells[0] === 'metric' || /^-+$/.test(cells[0]!.replace(/\|/g, ''))) continue;
    rows.push({ metric: cells[0]!, result: cells[1]!, target: cells[2]! });
  }
  return { label: `Node ${node}${quick ? ' (--quick)' : ' (full run)'}`, rows };
}

const shape = (metric: string): string => metric.replace(/\d[\d,.]*/g, '#');

const [firstPath, secondPath] = process.argv.slice(2);
if (!firstPath || !secondPath) {
  process.stderr.write('usage: node dist/bench/node-columns.js <results.md> <other results.md>\n');
  process.exit(2);
}
const first = parse(firstPath);
const second = parse(secondPath);
const unpaired = [...second.rows];
const lines = [`| metric | ${first.label} | ${second.label} | target |`, '|---|---|---|---|'];
for (const row of first.rows) {
  const i = unpaired.findIndex((r) => shape(r.metric) === shape(row.metric));
  const other = i >= 0 ? unpaired.splice(i, 1)[0]!.result : '—';
  lines.push(`| ${row.metric} | ${row.result} | ${other} | ${row.target} |`);
}
for (const row of unpaired) lines.push(`| ${row.metric} | — | ${row.result} | ${row.target} |`);
process.stdout.write(lines.join('\n') + '\n');
