// The value types of command-line flags, upstream style: how one
// occurrence of a flag's text becomes a value (booleans as Go's ParseBool,
// ints, ports, IPs, URLs, durations, lists and enums) and how a default is
// printed. The flag table itself is flags.ts.

import { isIP } from 'node:net';
import { formatDuration, parseDuration } from '../machinery/time.js';

/** How one occurrence of a flag's text becomes a value. */
export interface FlagType<T> {
  /** Shown after the flag name in help, e.g. `int`, `duration`; empty for booleans. */
  label: string;
  /** `previous` is the value from earlier occurrences (lists append to it). Throws with the reason. */
  parse(raw: string, previous: T | undefined): T;
  /** Text for the default in help. */
  format(value: T): string;
  /** Booleans take no separate value: `--flag` means true. */
  boolean?: boolean;
}

const trueWords = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const falseWords = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** The spellings Go's strconv.ParseBool accepts. */
export const boolType: FlagType<boolean> = {
  label: '',
  boolean: true,
  parse(raw) {
    if (trueWords.has(raw)) return true;
    if (falseWords.has(raw)) return false;
    throw new Error('expected true or false');
  },
  format: String,
};

export const intType: FlagType<number> = {
  label: 'int',
  parse(raw) {
    const value = Number(raw);
    if (!/^[+-]?\d+$/.test(raw) || !Number.isSafeInteger(value)) throw new Error('not an integer');
    return value;
  },
  format: String,
};

export const portType: FlagType<number> = {
  label: 'int',
  parse(raw) {
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value > 65535) throw new Error('not a port number (0 to 65535)');
    return value;
  },
  format: String,
};

export const ipType: FlagType<string> = {
  label: 'ip',
  parse(raw) {
    if (isIP(raw) === 0) throw new Error('not an IP address');
    return raw;
  },
  format: String,
};

/** A non-empty string, such as a file path. */
export const stringType: FlagType<string> = {
  label: 'string',
  parse(raw) {
    if (raw === '') throw new Error('must not be empty');
    return raw;
  },
  format: (value) => value,
};

/** Repeatable: each occurrence appends one value; the first replaces the default. */
export function listOf<T>(item: FlagType<T>): FlagType<T[]> {
  return {
    label: `${item.label}Array`,
    parse: (raw, previous) => [...(previous ?? []), item.parse(raw, undefined)],
    format: (values) => `[${values.map((value) => item.format(value)).join(',')}]`,
  };
}

/** Comma-separated and repeatable (a string slice, as upstream's --etcd-servers). */
export function commaListOf<T>(item: FlagType<T>): FlagType<T[]> {
  return {
    label: 'strings',
    parse: (raw, previous) => [...(previous ?? []), ...raw.split(',').map((part) => item.parse(part.trim(), undefined))],
    format: (values) => `[${values.map((value) => item.format(value)).join(',')}]`,
  };
}

/** An http or https URL with a host, such as a store member's client URL. */
export const urlType: FlagType<string> = {
  label: 'string',
  parse(raw) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('not a URL (scheme://host:port)');
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new Error('not an http or https URL with a host');
    return raw;
  },
  format: (value) => value,
};

export function enumOf<T extends string>(values: readonly T[]): FlagType<T> {
  return {
    label: 'string',
    parse(raw) {
      if (!(values as readonly string[]).includes(raw)) throw new Error(`must be one of ${values.join(', ')}`);
      return raw as T;
    },
    format: (value) => value,
  };
}

/** A non-negative Go duration (`300ms`, `5m`, `1h30m`) as milliseconds. */
export const durationType: FlagType<number> = {
  label: 'duration',
  parse(raw) {
    const ms = parseDuration(raw);
    if (ms < 0) throw new Error('must not be negative');
    return ms;
  },
  format: formatDuration,
};
