// Keeps a stored range true to what the objects hold, as upstream's repair
// controllers do at start and every few minutes: the range is rebuilt from
// the values the Services hold (so a value held but not marked, after a
// crash between the two writes, is marked again), and a value marked but
// held by nobody is given back only once it was seen unheld by several
// repairs in a row (a create may be between taking it and storing its
// object). The rebuilt range is written by compare-and-swap: a concurrent
// allocation makes the repair start over.

import type { StoredRange } from './stored.js';

/** What one repair found, for the log (upstream records them as events). */
export interface RepairReport {
  /** Held by an object but not marked: marked now. */
  notMarked: string[];
  /** Held by more than one object. */
  heldTwice: string[];
  /** Held but outside the configured range (the range changed). */
  outOfRange: string[];
  /** Marked, held by nobody, seen so by enough repairs: given back. */
  released: string[];
}

/** Repairs in a row that must find a marked value unheld before it is given back (upstream's numRepairsBeforeLeakCleanup). */
export const repairsBeforeRelease = 3;

export class RangeRepair<V> {
  /** Marked values no object held, by offset: how many repairs in a row found them so. */
  private readonly unheld = new Map<number, number>();

  constructor(
    private readonly range: StoredRange<V>,
    /** Every value the objects hold now (a consistent read of them). */
    private readonly held: () => Promise<V[]>,
  ) {}

  async runOnce(): Promise<RepairReport> {
    for (;;) {
      const stored = await this.range.read();
      const values = await this.held();
      const rebuilt = this.range.emptyBitmap();
      const report: RepairReport = { notMarked: [], heldTwice: [], outOfRange: [], released: [] };
      // A range stored for another span (the flag changed) is rebuilt from the objects alone.
      const sameRange = stored.storedRange === '' || stored.storedRange === this.range.range.text;
      for (const value of values) {
        const offset = this.range.range.offsetOf(value);
        if (offset === undefined) { report.outOfRange.push(String(value)); continue; }
        if (!rebuilt.allocate(offset)) { report.heldTwice.push(String(value)); continue; }
        if (!sameRange || !stored.bitmap.has(offset)) report.notMarked.push(String(value));
      }
      const unheld = new Map<number, number>();
      if (sameRange) {
        stored.bitmap.forEach((offset) => {
          if (rebuilt.has(offset)) return;
          const seen = (this.unheld.get(offset) ?? 0) + 1;
          if (seen < repairsBeforeRelease) {
            rebuilt.allocate(offset);
            unheld.set(offset, seen);
          } else {
            report.released.push(String(this.range.range.valueAt(offset)));
          }
        });
      }
      // Nothing to correct: no write (a repair every few minutes should not churn the store).
      const unchanged = sameRange && stored.modRevision > 0 && rebuilt.snapshot().equals(stored.bitmap.snapshot());
      if (unchanged || await this.range.replace(rebuilt, stored.modRevision)) {
        this.unheld.clear();
        for (const [offset, seen] of unheld) this.unheld.set(offset, seen);
        return report;
      }
    }
  }
}
