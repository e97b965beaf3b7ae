// Where a line of built code came from, read from the source map beside it.
// The CLI runs as a bundle (scripts/bundle.mjs) whose frames name chunk files;
// a stack trace or a log line's file:line should name our sources. Node's own
// source-map support reads and decodes every map as each module loads (tens
// of ms at every start) and its decoder takes ~0.5 s for the bundle's main
// map: here a map is read when a frame of its file is first asked about, and
// decoded in one pass that keeps, per generated line, only where it starts.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourcePosition {
  /** Absolute path of the source file. */
  file: string;
  /** 1-based, as stack traces count. */
  line: number;
  column: number;
}

interface DecodedMap {
  sources: string[];
  mappings: string;
  /** Per generated line: offset of its first segment in `mappings`, then the source, line and column carried into it. */
  lineStarts: Int32Array;
}

const base64Digit = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) base64Digit[c.charCodeAt(0)] = i;

/** Decodes the VLQ fields of one segment starting at `at` into `out`; the offset after it. */
function readSegment(mappings: string, at: number, out: number[]): number {
  out.length = 0;
  let value = 0;
  let shift = 0;
  while (at < mappings.length) {
    const c = mappings.charCodeAt(at);
    if (c === 44 /* , */ || c === 59 /* ; */) break;
    const digit = c < 128 ? base64Digit[c]! : -1;
    if (digit < 0) throw new Error('bad source map');
    at++;
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return at;
}

function decode(text: string, mapFile: string): DecodedMap {
  const payload = JSON.parse(text) as { sources?: unknown; sourceRoot?: unknown; mappings?: unknown };
  if (!Array.isArray(payload.sources) || typeof payload.mappings !== 'string') throw new Error('bad source map');
  const root = resolve(dirname(mapFile), typeof payload.sourceRoot === 'string' ? payload.sourceRoot : '');
  const sources = payload.sources.map((s) => resolve(root, String(s)));
  const mappings = payload.mappings;
  const starts: number[] = [0, 0, 0, 0];
  const fields: number[] = [];
  let source = 0;
  let line = 0;
  let column = 0;
  for (let at = 0; at < mappings.length;) {
    const c = mappings.charCodeAt(at);
    if (c === 59) {
      at++;
      starts.push(at, source, line, column);
    } else if (c === 44) {
      at++;
    } else {
      at = readSegment(mappings, at, fields);
      if (fields.length >= 4) {
        source += fields[1]!;
        line += fields[2]!;
        column += fields[3]!;
      }
    }
  }
  return { sources, mappings, lineStarts: Int32Array.from(starts) };
}

/** Maps by built file; null where a file has no (readable) map. */
const maps = new Map<string, DecodedMap | null>();

function mapOf(file: string): DecodedMap | null {
  let map = maps.get(file);
  if (map !== undefined) return map;
  map = null;
  try {
    const mapFile = `${file}.map`;
    if (existsSync(mapFile)) map = decode(readFileSync(mapFile, 'utf8'), mapFile);
  } catch { /* an unreadable map leaves the built position */ }
  maps.set(file, map);
  return map;
}

/** The source position of a built file's line and column (1-based, a path or file: URL); undefined where no map says. */
export function originalPosition(fileOrUrl: string, line: number, column: number): SourcePosition | undefined {
  if (fileOrUrl.startsWith('node:')) return undefined;
  let file = fileOrUrl;
  try {
    if (file.startsWith('file:')) file = fileURLToPath(file);
  } catch {
    return undefined;
  }
  if (!file.endsWith('.js')) return undefined;
  const map = mapOf(file);
  const index = (line - 1) * 4;
  if (!map || index < 0 || index >= map.lineStarts.length) return undefined;
  const starts = map.lineStarts;
  let source = starts[index + 1]!;
  let srcLine = starts[index + 2]!;
  let srcColumn = starts[index + 3]!;
  let genColumn = 0;
  let found: SourcePosition | undefined;
  const fields: number[] = [];
  // The last segment of the line that starts at or before the column.
  for (let at = starts[index]!; at < map.mappings.length && map.mappings.charCodeAt(at) !== 59;) {
    if (map.mappings.charCodeAt(at) === 44) {
      at++;
      continue;
    }
    at = readSegment(map.mappings, at, fields);
    genColumn += fields[0]!;
    if (fields.length < 4) continue;
    source += fields[1]!;
    srcLine += fields[2]!;
    srcColumn += fields[3]!;
    if (genColumn > column - 1 && found) break;
    const file = map.sources[source];
    if (file !== undefined) found = { file, line: srcLine + 1, column: srcColumn + 1 };
    if (genColumn > column - 1) break;
  }
  return found;
}

/** One frame of a stack as V8 writes it, its location replaced by the source's where a map says. */
function frameLine(site: NodeJS.CallSite): string {
  const text = String(site);
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!file || line === null || column === null) return text;
  const at = originalPosition(file, line, column);
  if (!at) return text;
  return text.replace(`${file}:${line}:${column}`, `${at.file}:${at.line}:${at.column}`);
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
