// Static tokens (--token-auth-file): a CSV file of `token,user,uid` with an
// optional fourth column of comma-separated groups (quoted: "g1,g2"), read as
// upstream reads it with Go's CSV rules. A malformed file stops the start with
// a message naming the line.

import { readFile } from 'node:fs/promises';
import type { UserInfo } from '../../machinery/user.js';
import { sharedUser } from '../../machinery/user.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

export class TokenFileError extends Error {
  override name = 'TokenFileError';
}

export interface TokenFile {
  tokens: Map<string, UserInfo>;
  /** Lines skipped or overridden (empty or repeated tokens), for the log. */
  warnings: string[];
}

interface CsvRecord {
  line: number;
  fields: string[];
}

/** Go's unicode.IsSpace for the characters a CSV line can hold. */
const isSpace = (c: string) => /\s/.test(c);

/**
 * Splits CSV text into records as Go's encoding/csv does with
 * TrimLeadingSpace and variable field counts: empty lines are skipped,
 * quoted fields may hold commas, `""` and newlines, a quote inside an
 * unquoted field or text after a closing quote is an error.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  const src = text.replace(/\r\n/g, '\n');
  let i = 0;
  let line = 1;
  while (i < src.length) {
    if (src[i] === '\n') { i++; line++; continue; } // an empty line
    const start = line;
    const fields: string[] = [];
    let lineStart = i;
    for (;;) {
      while (i < src.length && src[i] !== '\n' && isSpace(src[i]!)) i++;
      if (src[i] === '"') {
        const quoteLine = line;
        const quoteColumn = i - lineStart + 1;
        let value = '';
        i++;
        for (;;) {
          if (i >= src.length) throw new TokenFileError(`parse error on line ${quoteLine}, column ${quoteColumn}: extraneous or missing " in quoted-field`);
          const c = src[i]!;
          if (c === '"') {
            if (src[i + 1] === '"') { value += '"'; i += 2; continue; }
            i++;
            break;
          }
          if (c === '\n') { line++; lineStart = i + 1; }
          value += c;
          i++;
        }
        if (i < src.length && src[i] !== ',' && src[i] !== '\n') {
          throw new TokenFileError(`parse error on line ${line}, column ${i - lineStart + 1}: extraneous or missing " in quoted-field`);
        }
        fields.push(value);
      } else {
        let end = i;
        while (end < src.length && src[end] !== ',' && src[end] !== '\n') end++;
        const value = src.slice(i, end);
        const quote = value.indexOf('"');
        if (quote >= 0) throw new TokenFileError(`parse error on line ${line}, column ${i + quote - lineStart + 1}: bare " in non-quoted-field`);
        fields.push(value);
        i = end;
      }
      if (src[i] === ',') { i++; continue; }
      break;
    }
    records.push({ line: start, fields });
    if (src[i] === '\n') { i++; line++; }
  }
  return records;
}

/** The tokens of a token file's text; `source` names the file in messages. */
export function parseTokenFile(text: string, source: string): TokenFile {
  let records: CsvRecord[];
  try {
    records = parseCsv(text);
  } catch (e) {
    throw new TokenFileError(`token file '${source}': ${(e as Error).message}`);
  }
  const tokens = new Map<string, UserInfo>();
  const warnings: string[] = [];
  for (const { line, fields } of records) {
    if (fields.length < 3) {
      throw new TokenFileError(`token file '${source}' must have at least 3 columns (token, user name, user uid), found ${fields.length} on line ${line}`);
    }
    const [token, username, uid, groups] = fields as [string, string, string, string | undefined];
    if (token === '') {
      warnings.push(`empty token has been found in token file '${source}', line ${line}`);
      continue;
    }
    if (tokens.has(token)) warnings.push(`duplicate token has been found in token file '${source}', line ${line}`);
    const user: UserInfo = { username, groups: groups === undefined ? [] : groups.split(',') };
    if (uid !== '') user.uid = uid;
    tokens.set(token, user);
  }
  return { tokens, warnings };
}

/** Reads and parses --token-auth-file; any failure is a TokenFileError naming the file. */
export async function loadTokenFile(path: string): Promise<TokenFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new TokenFileError(`--token-auth-file ${path}: ${(e as Error).message}`);
  }
  return parseTokenFile(text, path);
}

export class TokenFileAuthenticator implements TokenAuthenticator {
  readonly name = 'token-file';
  /** The users are frozen: every request with a token shares its one user object. */
  constructor(private readonly tokens: ReadonlyMap<string, UserInfo>) {
    for (const user of tokens.values()) sharedUser(user);
  }

  authenticateToken(token: string): TokenResult {
    const user = this.tokens.get(token);
    if (!user) return { kind: 'none' };
    return { kind: 'user', user, audiences: [] };
  }
}
