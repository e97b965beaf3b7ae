// The audit log backend: events become lines (JSON, or upstream's legacy
// text) queued in memory and appended by one asynchronous writer, so that a
// request never waits for the disk (--audit-log-mode batch); in the blocking
// modes each line is written on its own and the request waits for it, as
// upstream's default does. A file rotates when it would pass
// --audit-log-maxsize megabytes (the old one renamed with a timestamp, as
// upstream's lumberjack names it); backups beyond --audit-log-maxbackup or
// older than --audit-log-maxage days are removed. A full queue or a failed
// write drops the events, counts them and says so in the server's log.

import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { AuditEvent } from './event.js';
import type { AuditMode } from '../options.js';
import { goQuote } from '../../machinery/goquote.js';
import { rfc3339NanoOfMicro } from '../../machinery/time.js';

export interface LogBackendOptions {
  /** A file path, or `-` for standard output. */
  path: string;
  format: 'json' | 'legacy';
  /** batch: lines gathered and written in the background; blocking modes: each line written before process() settles. */
  mode?: AuditMode;
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMB: number;
  /** Called with the number of events lost and why; the caller counts and logs. */
  onError(lost: number, err: unknown): void;
}

/** How long lines wait to be written together, and how many bytes are written without waiting. */
const flushDelayMs = 20;
const flushBytes = 1 << 20;

/** Events queued beyond this many are dropped (the writer cannot keep up). */
const maxQueued = 100_000;

/**
 * Upstream's legacy line (its EventString): the time the request was
 * received (RFC 3339, trailing zeros dropped), then key="value" pairs quoted
 * as Go's %q; a list of groups is one quoted text of quoted names.
 */
export function legacyLine(e: AuditEvent): string {
  const q = goQuote;
  const groupsOf = (groups: readonly string[]) => groups.map((g) => q(g)).join(',');
  const named = (e.user.username ?? '') !== '';
  const user = named ? e.user.username : '<none>';
  const groups = named && e.user.groups?.length ? groupsOf(e.user.groups) : '<none>';
  const as = e.impersonatedUser ? e.impersonatedUser.username : '<self>';
  const asGroups = e.impersonatedUser?.groups ? groupsOf(e.impersonatedUser.groups) : '<lookup>';
  const namespace = e.objectRef?.namespace || '<none>';
  const response = e.responseStatus?.code !== undefined ? String(e.responseStatus.code) : '<deferred>';
  const ip = e.sourceIPs[0] ?? '<unknown>';
  return `${rfc3339NanoOfMicro(e.requestReceivedTimestamp)} AUDIT: id=${q(e.auditID)} stage=${q(e.stage)} ip=${q(ip)} method=${q(e.verb)} `
    + `user=${q(user)} groups=${q(groups)} as=${q(as)} asgroups=${q(asGroups)} `
    + `user-agent=${q(e.userAgent ?? '')} namespace=${q(namespace)} uri=${q(e.requestURI)} response="${response}"`;
}

/** lumberjack's backup name: `audit-2006-01-02T15-04-05.000.log` beside `audit.log`. */
function backupName(file: string, now: Date): string {
  const ext = extname(file);
  const stamp = now.toISOString().replace(/:/g, '-').replace('Z', '');
  return join(dirname(file), `${basename(file, ext)}-${stamp}${ext}`);
}

export class LogBackend {
  /**
   * Lines are encoded the moment they arrive, into `fill`, so that no event
   * text outlives its request (text kept for a batch's 20 ms would reach the
   * old generation and cost full collections); `ends` marks where each line
   * ends, for rotation. While one buffer is written the other fills.
   */
  private fill = Buffer.allocUnsafeSlow(64 * 1024);
  private spare = Buffer.allocUnsafeSlow(64 * 1024);
  private filled = 0;
  private ends: number[] = [];
  private handle?: FileHandle;
  private size = 0;
  private writing?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** Set by close(): the writer writes until nothing is left. */
  private closing = false;

  private constructor(private readonly o: LogBackendOptions) {}

  /** Opens the file (creating its folder) so that a bad path stops the start, not the first request. */
  static async open(o: LogBackendOptions): Promise<LogBackend> {
    const backend = new LogBackend(o);
    if (o.path !== '-') await backend.openFile();
    return backend;
  }

  private async openFile(): Promise<void> {
    await mkdir(dirname(this.o.path), { recursive: true });
    this.handle = await open(this.o.path, 'a', 0o600);
    this.size = (await this.handle.stat()).size;
  }

  /** Blocking modes: the writes of single lines, one after the other. */
  private blockingWrites: Promise<unknown> = Promise.resolve();

  /**
   * An event's JSON text, whole or in two parts (see AuditSink), written as
   * one line. In the blocking modes it settles once the line is written: with
   * false when it could not be and the mode is blocking-strict.
   */
  process(head: string, rest = ''): Promise<boolean> | undefined {
    if (this.closed) return undefined;
    if (this.o.mode === 'blocking' || this.o.mode === 'blocking-strict') return this.writeNow(head + rest);
    this.enqueue(head, rest);
    return undefined;
  }

  private writeNow(json: string): Promise<boolean> {
    const line = Buffer.from(`${this.o.format === 'legacy' ? legacyLine(JSON.parse(json) as AuditEvent) : json}\n`);
    const written = this.blockingWrites.then(() => this.write(line, [line.length]));
    this.blockingWrites = written.catch(() => undefined);
    return written.then(() => true, (err) => {
      this.o.onError(1, err);
      return this.o.mode !== 'blocking-strict';
    });
  }

  private enqueue(head: string, rest: string): void {
    if (this.ends.length >= maxQueued) {
      this.o.onError(1, new Error('the audit log writer is behind; event dropped'));
      return;
    }
    if (this.o.format === 'legacy') {
      head = legacyLine(JSON.parse(head + rest) as AuditEvent);
      rest = '';
    }
    // A UTF-16 unit never takes more than 3 bytes in UTF-8, and the newline one.
    const room = (head.length + rest.length) * 3 + 1;
    if (this.filled + room > this.fill.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.filled + room, this.fill.length * 2));
      this.fill.copy(bigger, 0, 0, this.filled);
      this.fill = bigger;
    }
    // The parts are written one after the other: joined, they would be copied into a new string first.
    this.filled += this.fill.write(head, this.filled);
    if (rest) this.filled += this.fill.write(rest, this.filled);
    this.fill[this.filled++] = 0x0a;
    this.ends.push(this.filled);
    // Lines gather for a moment so that one write carries many: a write per event costs more than the event.
    if (this.filled >= flushBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), flushDelayMs);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // Only with lines to write: a drain of nothing would settle before `writing` is set, and stay set.
    if (!this.writing && this.filled) this.writing = this.drain();
  }

  /**
   * Writes what has filled, one writer at a time. Lines that arrive during a
   * write wait for the next timer unless they already make a full batch:
   * writing straight again would mean a write per handful of events.
   */
  private async drain(): Promise<void> {
    try {
      for (let first = true; this.filled && (first || this.filled >= flushBytes || this.closing); first = false) {
        const bytes = this.fill.subarray(0, this.filled);
        const ends = this.ends;
        // New lines go to the other buffer while this one is written.
        [this.fill, this.spare] = [this.spare, this.fill];
        this.filled = 0;
        this.ends = [];
        try {
          await this.write(bytes, ends);
        } catch (err) {
          this.o.onError(ends.length, err);
        }
      }
    } finally {
      this.writing = undefined;
      if (this.filled) this.timer ??= setTimeout(() => this.flush(), flushDelayMs);
    }
  }

  private async write(bytes: Buffer, ends: readonly number[]): Promise<void> {
    if (this.o.path === '-') {
      await new Promise<void>((resolve, reject) => process.stdout.write(bytes, (err) => (err ? reject(err) : resolve())));
      return;
    }
    const limit = this.o.maxSizeMB * 1024 * 1024;
    if (limit === 0 || this.size + bytes.length <= limit) return this.append(bytes);
    // Rotation happens between lines: a file never ends in half an event.
    let from = 0;
    for (let i = 0; i < ends.length; i++) {
      const lineStart = i === 0 ? 0 : ends[i - 1]!;
      if (this.size + (ends[i]! - from) > limit && this.size + (lineStart - from) > 0) {
        await this.append(bytes.subarray(from, lineStart));
        from = lineStart;
        await this.rotate();
      }
    }
    await this.append(bytes.subarray(from));
  }

  private async append(bytes: Buffer): Promise<void> {
    if (!bytes.length) return;
    if (!this.handle) await this.openFile();
    await this.handle!.write(bytes);
    this.size += bytes.length;
  }

  private async rotate(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    await rename(this.o.path, backupName(this.o.path, new Date()));
    await this.openFile();
    await this.prune();
  }

  /** Removes backups past the count or the age limits. */
  private async prune(): Promise<void> {
    if (this.o.maxBackups === 0 && this.o.maxAgeDays === 0) return;
    const dir = dirname(this.o.path);
    const ext = extname(this.o.path);
    const prefix = `${basename(this.o.path, ext)}-`;
    const backups: { file: string; mtime: number }[] = [];
    for (const name of await readdir(dir)) {
      if (!name.startsWith(prefix) || !name.endsWith(ext) || name === basename(this.o.path)) continue;
      const file = join(dir, name);
      backups.push({ file, mtime: (await stat(file)).mtimeMs });
    }
    backups.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? 1 : -1));
    const oldest = this.o.maxAgeDays > 0 ? Date.now() - this.o.maxAgeDays * 86_400_000 : -Infinity;
    for (const [i, b] of backups.entries()) {
      if ((this.o.maxBackups > 0 && i >= this.o.maxBackups) || b.mtime < oldest) await unlink(b.file).catch(() => undefined);
    }
  }

  /** Writes what is queued, then closes the file. */
  async close(): Promise<void> {
    this.closing = true;
    await this.blockingWrites;
    for (this.flush(); this.writing; this.flush()) await this.writing;
    clearTimeout(this.timer);
    this.closed = true;
    await this.handle?.close();
    this.handle = undefined;
  }
}

