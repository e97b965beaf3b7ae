// The server's logger, in one format per run as upstream's --logging-format:
// `text`, upstream's klog lines (`I1207 19:21:29.123456   4242 start.js:310]
// "serving" url="https://..."`), or `json`, pino's own lines. Every line,
// the CLI's welcome and shutdown lines among them, goes to standard error as
// klog's do. Text is pino's JSON line rewritten just before it is written
// (pino's streamWrite hook), so the log calls are the same in both formats.

import pino, { type Logger } from 'pino';
import { fileURLToPath } from 'node:url';
import { basename } from 'node:path';
import { originalPosition } from '../machinery/sourcemaps.js';

/** How log lines look, with upstream's names (text: klog's lines). */
export const loggingFormats = ['text', 'json'] as const;
export type LoggingFormat = (typeof loggingFormats)[number];

/** Where lines go instead of standard error (tests, embedding). */
export interface LogDestination {
  write(line: string): unknown;
}

export interface LoggerOptions {
  level: string;
  format: LoggingFormat;
  destination?: LogDestination;
}

export function createLogger(options: LoggerOptions): Logger {
  const destination = options.destination ?? pino.destination({ dest: 2 });
  const hooks = options.format === 'text' ? { streamWrite: textLine } : {};
  return pino({ level: options.level, base: undefined, hooks }, destination);
}

/** A log line never fails a call: a record that cannot be rewritten stays JSON. */
function textLine(json: string): string {
  try {
    return klogLine(json, callerOf());
  } catch {
    return json;
  }
}

/** pino's levels to klog's severity letters (klog has no debug: debug and trace are info at a higher verbosity). */
function severity(level: number): string {
  if (level >= 60) return 'F';
  if (level >= 50) return 'E';
  if (level >= 40) return 'W';
  return 'I';
}

const pinoFolder = /[\\/]node_modules[\\/]pino[\\/]/;

/** `file:line` of the code that called the logger, as klog's header names it. */
function callerOf(): string {
  const keep = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  let sites: NodeJS.CallSite[] | undefined;
  try {
    Error.stackTraceLimit = 13;
    Error.prepareStackTrace = (_e, callSites) => callSites;
    // From this very function, whose frame says which source is this module's (a bundle holds many).
    Error.captureStackTrace(holder);
    // The stack is formatted when first read: read while the call sites are what formatting gives.
    sites = Array.isArray(holder.stack) ? holder.stack : undefined;
  } finally {
    Error.stackTraceLimit = keep;
    Error.prepareStackTrace = prepare;
  }
  let thisSource: string | undefined;
  for (const site of sites ?? []) {
    let file = site.getFileName() ?? '';
    if (file === '' || file.startsWith('node:')) continue;
    if (file.startsWith('file:')) file = fileURLToPath(file);
    // Built code (the CLI's bundle above all) is named by its source.
    const source = originalPosition(file, site.getLineNumber() ?? 0);
    if (pinoFolder.test(source?.file ?? file)) continue;
    if (site === sites![0]) {
      thisSource = source?.file ?? file;
      continue;
    }
    if ((source?.file ?? file) === thisSource) continue;
    return `${basename(source?.file ?? file)}:${source?.line ?? site.getLineNumber() ?? 0}`;
  }
  return '???:1';
}

const two = (n: number) => String(n).padStart(2, '0');

/** klog's header: severity, mmdd hh:mm:ss.uuuuuu (local time), the process id right-aligned in 7, file:line. */
export function klogHeader(level: number, micros: number, source: string, pid = process.pid): string {
  const at = new Date(Math.floor(micros / 1000));
  const fraction = String(Math.floor(micros) % 1_000_000).padStart(6, '0');
  return `${severity(level)}${two(at.getMonth() + 1)}${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${fraction} ${String(pid).padStart(7, ' ')} ${source}] `;
}

/** The record pino wrote as one klog text line (its message quoted, then key=value pairs in order). */
export function klogLine(json: string, source: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = typeof record.level === 'number' ? record.level : 30;
  const time = typeof record.time === 'number' ? record.time * 1000 : Date.now() * 1000;
  let line = klogHeader(level, time, source) + goQuote(typeof record.msg === 'string' ? record.msg : '');
  for (const [key, value] of Object.entries(record)) {
    if (key === 'level' || key === 'time' || key === 'msg') continue;
    line += ' ' + key + formatValue(value);
    // An error at error severity keeps its stack, as upstream's panic lines do.
    if (level >= 50 && isSerializedError(value) && typeof value.stack === 'string') line += ' stacktrace' + multiLine(value.stack);
  }
  return line + '\n';
}

interface SerializedError { type?: unknown; message: string; stack?: unknown }

/** pino's err serializer output: `{ type, message, stack, ... }`. */
function isSerializedError(value: unknown): value is SerializedError {
  return typeof value === 'object' && value !== null && typeof (value as SerializedError).message === 'string' && 'stack' in value;
}

/** `=value` as klog writes it: strings quoted, errors as their message, numbers and booleans bare, others compact JSON. */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return value.includes('\n') ? multiLine(value) : `=${goQuote(value)}`;
  if (isSerializedError(value)) return formatValue(value.message);
  if (typeof value === 'number' || typeof value === 'boolean') return `=${value}`;
  if (value === null) return '=<nil>';
  return `=${JSON.stringify(value)}`;
}

/** klog's multi-line form: each line indented by a tab, the closing ` >` on a line of its own. Non-printable characters stay escaped. */
function multiLine(value: string): string {
  const lines = value.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return `=<\n${lines.map((l) => `\t${escapeNonPrintable(l, false)}\n`).join('')} >`;
}

/** Go's strconv.Quote: printable characters as they are, quotes and backslashes and the rest escaped (a log line never carries a raw control character). */
export function goQuote(value: string): string {
  return `"${escapeNonPrintable(value, true)}"`;
}

const named: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
// Go's IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const nonPrintable = /[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/gu;

function escapeNonPrintable(value: string, quoted: boolean): string {
  const escapedQuotes = quoted ? value.replace(/[\\"]/g, (c) => `\\${c}`) : value;
  return escapedQuotes.replace(nonPrintable, (c) => {
    if (!quoted && c === '\t') return c;
    const name = named[c];
    if (name) return name;
    const code = c.codePointAt(0)!;
    if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
    if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
    return `\\U${code.toString(16).padStart(8, '0')}`;
  });
}
