// The no-work server: the ceiling the write rows are measured against. An
// HTTPS server on 127.0.0.1 with the same TLS set-up as the real one (its
// serving pair and client CA, client certificates requested, keep-alive
// 65 s) that reads every request body fully and answers fixed small JSON:
// 201 to a POST, 200 to anything else. It does nothing else, so the rate the
// load generator reaches against it is what HTTPS, the client and the
// machine allow.
//
//   node dist/bench/nowork-server.js <pki dir> <port>
//
// Prints `listening <port>` on stdout once it accepts connections.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { join } from 'node:path';

const [pkiDir, portArg] = process.argv.slice(2);
if (!pkiDir || !portArg) {
  process.stderr.write('usage: node dist/bench/nowork-server.js <pki dir> <port>\n');
  process.exit(2);
}
const read = (name: string) => readFileSync(join(pkiDir, name), 'utf8');

// About the size of the ServiceAccount the real server answers with.
const answer = Buffer.from(JSON.stringify({
  apiVersion: 'v1', kind: 'ServiceAccount',
  metadata: {
    name: 'nowork', namespace: 'bench', uid: '00000000-0000-4000-8000-000000000000', resourceVersion: '1',
    creationTimestamp: '2000-01-01T00:00:00Z', labels: { app: 'bench' },
    managedFields: [{
      manager: 'node', operation: 'Update', apiVersion: 'v1', time: '2000-01-01T00:00:00Z',
      fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    }],
  },
}));
const headers = { 'Content-Type': 'application/json', 'Content-Length': String(answer.length) };

const server = createServer({
  key: read('apiserver.key'),
  cert: read('apiserver.crt'),
  ca: read('ca.crt'),
  requestCert: true,
  rejectUnauthorized: false,
}, (req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(req.method === 'POST' ? 201 : 200, headers);
    res.end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write(`listening ${portArg}\n`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
