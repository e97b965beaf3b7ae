// A second test reporter: after the run, the failed tests again, each with its
// file and error, in one block at the very end of the output. Node 20's TAP
// reporter prints a failure where it happened, thousands of lines up, and CI
// keeps only the tail of a long log.

const MAX_ERROR_LINES = 30;

function describe(error) {
  // The runner wraps a test's own error: the cause is what the test threw.
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? (cause.stack ?? String(cause)) : String(cause);
  return text.split('\n').slice(0, MAX_ERROR_LINES).map((line) => `    ${line}`).join('\n');
}

export default async function* failureSummary(source) {
  const failures = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A suite fails when a test in it did; that test is listed already.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failures.push({ name, file, error: details?.error });
  }
  if (failures.length === 0) return;
  yield `\n== ${failures.length} failed test${failures.length === 1 ? '' : 's'}:\n`;
  for (const f of failures) yield `- ${f.file ?? '(no file)'}: ${f.name}\n${describe(f.error)}\n`;
}
