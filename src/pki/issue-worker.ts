// The certificate thread's side (see issuer-thread.ts): builds each
// certificate asked for and answers with its PEM or the failure's message.

import { parentPort } from 'node:worker_threads';
import { buildCertificate, type IssueCertificateParams } from './issue.js';

parentPort!.on('message', (request: { id: number; params: IssueCertificateParams }) => {
  buildCertificate(request.params).then(
    (pem) => parentPort!.postMessage({ id: request.id, pem }),
    (err: unknown) => parentPort!.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
