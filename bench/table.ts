// The results table: metric | result | target, rendered as markdown.

export interface Row {
  metric: string;
  result: string;
  target: string;
}

/** A target cell: the goal, and whether this run met it. */
export function target(goal: string, met: boolean): string {
  return `${goal} (${met ? 'met' : 'MISSED'})`;
}

const escape = (s: string) => s.replace(/\|/g, '\\|');

export function markdownTable(rows: Row[]): string {
  const lines = ['| metric | result | target |', '|---|---|---|'];
  for (const r of rows) lines.push(`| ${escape(r.metric)} | ${escape(r.result)} | ${escape(r.target)} |`);
  return lines.join('\n') + '\n';
}
