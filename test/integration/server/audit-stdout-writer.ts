// Child process for the audit stdout test: an audit log on `-` that logs
// the audit IDs named on the command line, then closes.
// Usage: node audit-stdout-writer.js <auditID>...

import { LogBackend } from '../../../src/server/audit/log.js';

const log = await LogBackend.open({
  path: '-', format: 'json', maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0,
  onError: (lost, err) => {
    process.stderr.write(`lost ${lost}: ${String(err)}\n`);
    process.exitCode = 1;
  },
});
for (const auditID of process.argv.slice(2)) {
  log.process(JSON.stringify({ kind: 'Event', apiVersion: 'audit.plat.io/v1', level: 'Metadata', auditID, stage: 'ResponseComplete' }));
}
await log.close();
