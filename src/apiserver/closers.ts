// What a start has opened, closed last-opened first: each part adds its
// closer the moment it is made, so stop() and the clean-up of a failed start
// are the same list run the same way, and a part added between two others is
// closed between them without anyone listing the steps again.

export type Closer = () => unknown;

export class Closers {
  private readonly list: Closer[] = [];
  /** Set once closing has begun (/readyz fails from then on). */
  closing = false;

  add(close: Closer): void {
    this.list.push(close);
  }

  /**
   * Runs every closer once, the last added first, each awaited before the
   * next; one that fails does not keep the others from running. Resolves to
   * the failures, for the caller to report.
   */
  async closeAll(): Promise<unknown[]> {
    this.closing = true;
    const failures: unknown[] = [];
    for (let close = this.list.pop(); close; close = this.list.pop()) {
      try {
        await close();
      } catch (err) {
        failures.push(err);
      }
    }
    return failures;
  }
}
