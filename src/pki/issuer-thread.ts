// Certificates are built in a worker thread of their own. The X.509 library
// and what it pulls in take ~11 MB that a server which issues its key
// material once, at first start, and signs a CSR now and then should not
// keep: the thread starts when a certificate is asked for and ends once it
// has been idle for a moment. Certificates come in bursts (the key material
// of a first start, a batch of approved CSRs), and starting the thread again
// costs ~40 ms, so a quarter of a second of idleness is enough.

import { Worker } from 'node:worker_threads';
import type { IssueCertificateParams } from './issue.js';

/** How long the thread waits for more work before it ends. */
const idleMs = 250;

type Answer = { id: number; pem: string } | { id: number; error: string };

class CertificateThread {
  private readonly worker = new Worker(new URL('./issue-worker.js', import.meta.url));
  private readonly pending = new Map<number, { resolve(pem: string): void; reject(err: Error): void }>();
  private nextId = 0;
  private idleTimer?: NodeJS.Timeout;
  /** Set once the thread is ending or has ended: new work goes to a new thread. */
  ended = false;

  constructor() {
    // The thread never keeps the process alive by itself.
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => this.answered(answer));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`the certificate thread ended (exit code ${code})`)));
  }

  issue(params: IssueCertificateParams): Promise<string> {
    clearTimeout(this.idleTimer);
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, params });
    });
  }

  private answered(answer: Answer): void {
    const p = this.pending.get(answer.id);
    if (!p) return;
    this.pending.delete(answer.id);
    if ('pem' in answer) p.resolve(answer.pem);
    else p.reject(new Error(answer.error));
    if (this.pending.size === 0) {
      this.idleTimer = setTimeout(() => {
        this.ended = true;
        void this.worker.terminate();
      }, idleMs).unref();
    }
  }

  private fail(err: Error): void {
    this.ended = true;
    clearTimeout(this.idleTimer);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

let current: CertificateThread | undefined;

/** Builds a certificate (see buildCertificate in issue.ts) in the certificate thread; resolves with its PEM. */
export function issueCertificate(params: IssueCertificateParams): Promise<string> {
  if (!current || current.ended) current = new CertificateThread();
  return current.issue(params);
}
