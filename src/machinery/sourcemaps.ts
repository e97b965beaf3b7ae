// Which source line a line of built code came from. The CLI runs as a bundle
// (scripts/bundle.mjs) whose frames name chunk files; a stack trace or a log
// line's file:line should name our sources. Node's own source-map support
// reads and decodes every map as each module loads (tens of ms at every
// start; its decoder takes ~0.5 s for the bundle's main map), and decoding
// that map here at the first log line still cost ~0.1 s and ~15 MB of RSS.
// So the build writes beside each chunk a line table (per generated line,
// the source and line its first segment maps to), read as it is when a
// frame of that chunk is first asked about; a built file without one (tsc's
// output) has its source map read instead.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourcePosition {
  /** Absolute path of the source file. */
  file: string;
  /** 1-based, as stack traces count. */
  line: number;
}

/** Per generated line, the source line its first mapped segment comes from. */
export interface LineTable {
  /** Absolute paths. */
  sources: string[];
  /** Two per generated line: the index in `sources` (-1: none) and the 1-based source line. */
  lines: Int32Array;
}

const base64Digit = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) base64Digit[c.charCodeAt(0)] = i;

/** The line table of a source map's text (`mapFile` places its relative sources). */
export function lineTableOf(text: string, mapFile: string): LineTable {
  const payload = JSON.parse(text) as { sources?: unknown; sourceRoot?: unknown; mappings?: unknown };
  if (!Array.isArray(payload.sources) || typeof payload.mappings !== 'string') throw new Error('bad source map');
  const root = resolve(dirname(mapFile), typeof payload.sourceRoot === 'string' ? payload.sourceRoot : '');
  const sources = payload.sources.map((s) => resolve(root, String(s)));
  const mappings = payload.mappings;
  const lines: number[] = [-1, 0];
  // The running values of the fields (column, source, line, column in source), and which field comes next.
  const running = [0, 0, 0, 0];
  let field = 0;
  let value = 0;
  let shift = 0;
  let lineDone = false;
  for (let at = 0; at < mappings.length; at++) {
    const c = mappings.charCodeAt(at);
    if (c === 59 /* ; */ || c === 44 /* , */) {
      field = 0;
      if (c === 59) {
        running[0] = 0;
        lines.push(-1, 0);
        lineDone = false;
      }
      continue;
    }
    const digit = c < 128 ? base64Digit[c]! : -1;
    if (digit < 0) throw new Error('bad source map');
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    if (field < 4) running[field] = running[field]! + (value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
    // A segment's source line is known once its third field is read.
    if (field === 2 && !lineDone) {
      lines[lines.length - 2] = running[1]!;
      lines[lines.length - 1] = running[2]! + 1;
      lineDone = true;
    }
    field++;
  }
  return { sources, lines: Int32Array.from(lines) };
}

/**
 * A line table as a file (written beside each chunk of the bundle by
 * scripts/bundle.mjs): its sources as one line of JSON, relative to the
 * file, then the pairs as 32-bit integers.
 */
export function encodeLineTable(table: LineTable, tableFile: string): Buffer {
  const header = Buffer.from(`${JSON.stringify(table.sources.map((s) => relative(dirname(tableFile), s)))}\n`);
  const padded = Buffer.alloc(Math.ceil(header.length / 4) * 4, 0x20);
  header.copy(padded);
  return Buffer.concat([padded, Buffer.from(table.lines.buffer, table.lines.byteOffset, table.lines.byteLength)]);
}

function decodeLineTable(bytes: Buffer, tableFile: string): LineTable {
  const end = bytes.indexOf(0x0a);
  if (end < 0) throw new Error('bad line table');
  const sources = (JSON.parse(bytes.subarray(0, end).toString('utf8')) as unknown[]).map((s) => resolve(dirname(tableFile), String(s)));
  const start = Math.ceil((end + 1) / 4) * 4;
  const lines = new Int32Array(bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + bytes.length - ((bytes.length - start) % 8)));
  return { sources, lines };
}

/** Line tables by built file; null where a file has none. */
const tables = new Map<string, LineTable | null>();

/** A built file's line table: the one written beside it at build, else one read from its source map. */
function tableOf(file: string): LineTable | null {
  let table = tables.get(file);
  if (table !== undefined) return table;
  table = null;
  try {
    if (existsSync(`${file}.lines`)) table = decodeLineTable(readFileSync(`${file}.lines`), `${file}.lines`);
    else if (existsSync(`${file}.map`)) table = lineTableOf(readFileSync(`${file}.map`, 'utf8'), `${file}.map`);
  } catch { /* an unreadable table leaves the built position */ }
  tables.set(file, table);
  return table;
}

/** The source file and line of a built file's line (1-based; a path or file: URL); undefined where nothing says. */
export function originalPosition(fileOrUrl: string, line: number): SourcePosition | undefined {
  if (fileOrUrl.startsWith('node:')) return undefined;
  let file = fileOrUrl;
  try {
    if (file.startsWith('file:')) file = fileURLToPath(file);
  } catch {
    return undefined;
  }
  if (!file.endsWith('.js')) return undefined;
  const table = tableOf(file);
  const index = (line - 1) * 2;
  if (!table || index < 0 || index >= table.lines.length) return undefined;
  const source = table.sources[table.lines[index]!];
  return source === undefined ? undefined : { file: source, line: table.lines[index + 1]! };
}

/** One frame of a stack as V8 writes it, its location replaced by the source's where a map says. */
function frameLine(site: NodeJS.CallSite): string {
  const text = String(site);
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!file || line === null || column === null) return text;
  const at = originalPosition(file, line);
  if (!at) return text;
  // The table keeps lines only: a source's column is not known.
  return text.replace(`${file}:${line}:${column}`, `${at.file}:${at.line}`);
}

/**
 * Stack traces name source files (read when a stack is first read, never
 * before). Installed by the CLI, whose code is a bundle.
 */
export function mapStackTraces(): void {
  Error.prepareStackTrace = (error, sites) => {
    let header: string;
    try {
      header = Error.prototype.toString.call(error);
    } catch {
      header = '<error>';
    }
    return [header, ...sites.map((site) => `    at ${frameLine(site)}`)].join('\n');
  };
}
