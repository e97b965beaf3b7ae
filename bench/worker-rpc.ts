// Request/reply with a worker thread: each message carries an id, each reply
// answers it, and a call that gets no answer in time fails.

import { Worker } from 'node:worker_threads';

export class WorkerRpc<Request extends { id: number }, Reply extends { id: number }> {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();

  constructor(script: URL, workerData: unknown, private readonly label: string) {
    this.worker = new Worker(script, { workerData });
    this.worker.on('message', (reply: Reply) => {
      const p = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      p?.resolve(reply);
    });
    const failAll = (e: Error) => {
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    this.worker.on('error', failAll);
    this.worker.on('exit', (code) => failAll(new Error(`${label} exited (${code})`)));
  }

  /** Sends `body` and waits for its reply; `what` names the call in a timeout error. */
  async call(body: Omit<Request, 'id'>, timeoutMs: number, what: string): Promise<Reply> {
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<Reply>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ ...body, id });
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${this.label}: ${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}
