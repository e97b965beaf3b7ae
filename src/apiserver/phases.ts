// Where a start's time goes: each step of the start marks the moment it ends
// on Node's performance timeline (`start:<step>`, in ms from the process's
// start), and the 'serving' line carries the marks, so that the restart bench
// (bench/restart.ts) can say which step the milliseconds went to. A mark is
// an entry in a list: nothing is measured that the start would not do anyway.

/** Marks the end of one step of the start. */
export function markStartStep(step: string): void {
  performance.mark(`start:${step}`);
}

/** Each step's end in whole ms from the process's start, in order, and the process's start (epoch ms) to line them up with a clock outside. */
export function startSteps(): { origin: number; steps: Array<[string, number]> } {
  return {
    origin: Math.round(performance.timeOrigin),
    steps: performance.getEntriesByType('mark').filter((m) => m.name.startsWith('start:')).map((m) => [m.name.slice('start:'.length), Math.round(m.startTime)]),
  };
}
