// The schedule of a CronJob, checked as upstream's parser (robfig/cron's
// standard parser: five fields, names of months and weekdays, `@` descriptors,
// an optional leading TZ= or CRON_TZ=) checks it, with its error texts. Only
// checked: nothing runs CronJobs here.

import { parseDuration } from '../../../machinery/time.js';

interface Bounds { min: number; max: number; names?: Record<string, number> }

const months = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const weekdays = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const fields: Bounds[] = [{ min: 0, max: 59 }, { min: 0, max: 23 }, { min: 1, max: 31 }, { min: 1, max: 12, names: months }, { min: 0, max: 6, names: weekdays }];
const descriptors = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Whether Go's time.LoadLocation knows the zone (the IANA database; names are case-sensitive there). */
export function knownTimeZone(zone: string): boolean {
  // Go knows these two without its zone files.
  if (zone === 'UTC' || zone === 'Local') return true;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    // ICU reads names case-insensitively; Go's zone files do not.
    return resolved === zone || resolved.toLowerCase() !== zone.toLowerCase();
  } catch {
    return false;
  }
}

function mustParseInt(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new Error(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const n = Number(expr);
  if (n < 0) throw new Error(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

const intOrName = (expr: string, b: Bounds) => b.names?.[expr.toLowerCase() as keyof typeof b.names] ?? mustParseInt(expr);

function checkRange(expr: string, b: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  let start: number, end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') [start, end] = [b.min, b.max];
  else {
    start = intOrName(lowAndHigh[0]!, b);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = intOrName(lowAndHigh[1]!, b);
    else throw new Error(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    if (lowAndHigh.length === 1) end = b.max; // "N/step" means "N-max/step"
  } else if (rangeAndStep.length > 2) throw new Error(`too many slashes: ${expr}`);
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new Error(`step of range should be a positive number: ${expr}`);
}

/** The parser's error for a schedule, or undefined when it parses. */
export function scheduleError(schedule: string): string | undefined {
  try {
    let spec = schedule;
    if (spec.length === 0) return 'empty spec string';
    if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
      const space = spec.indexOf(' ');
      const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
      if (space < 0 || !knownTimeZone(zone)) return `provided bad location ${zone}: unknown time zone ${zone}`;
      spec = spec.slice(space).trim();
    }
    if (spec.startsWith('@')) {
      if (descriptors.has(spec)) return undefined;
      if (spec.startsWith('@every ')) {
        const text = spec.slice('@every '.length);
        try {
          parseDuration(text);
        } catch {
          return `failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(text)}`;
        }
        return undefined;
      }
      return `unrecognized descriptor: ${spec}`;
    }
    const parts = spec.split(/\s+/).filter(Boolean);
    if (parts.length !== 5) return `expected exactly 5 fields, found ${parts.length}: [${parts.join(' ')}]`;
    parts.forEach((part, i) => part.split(',').forEach((expr) => checkRange(expr, fields[i]!)));
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
