// Shared checks for tests that send bad input on purpose: the answer is a
// Status with the right code and reason, and afterwards the server is still
// ready, a canary object planted before is unchanged, and an ordinary write
// still works (nothing was poisoned).

import assert from 'node:assert/strict';
import type { TestClient, Response } from './client.js';

/** A failure answered as upstream does: a Status object with this code and reason. */
export function assertStatus(r: Pick<Response, 'status' | 'json'>, code: number, reason: string, message?: string): void {
  assert.equal(r.status, code, JSON.stringify(r.json));
  assert.equal(r.json?.kind, 'Status', JSON.stringify(r.json));
  assert.equal(r.json.apiVersion, 'v1');
  assert.equal(r.json.status, 'Failure');
  assert.equal(r.json.code, code);
  assert.equal(r.json.reason, reason);
  assert.equal(typeof r.json.message, 'string');
  if (message !== undefined) assert.equal(r.json.message, message);
}

/** An object created before the hostile requests, compared byte for byte after them. */
export class Canary {
  private constructor(private readonly client: TestClient, readonly path: string, private readonly body: string) {}

  static async plant(client: TestClient, namespace = 'default', name = 'canary'): Promise<Canary> {
    const collection = `/api/v1/namespaces/${namespace}/configmaps`;
    const created = await client.post(collection, {
      metadata: { name, labels: { canary: 'yes' }, annotations: { note: 'must never change' } },
      data: { key: 'value', other: 'x'.repeat(100) },
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const path = `${collection}/${name}`;
    return new Canary(client, path, (await client.get(path)).text);
  }

  /** The server is ready, the canary is unchanged, and an ordinary create and delete still work. */
  async assertServerIntact(): Promise<void> {
    assert.equal((await this.client.get('/readyz')).status, 200, 'the server stays ready');
    const now = await this.client.get(this.path);
    assert.equal(now.status, 200);
    assert.equal(now.text, this.body, 'the canary object is unchanged');
    assert.equal(({} as Record<string, unknown>).ref, undefined, 'Object.prototype is clean');
    const collection = this.path.replace(/\/[^/]+$/, '');
    const name = `probe-${process.hrtime.bigint()}`;
    const created = await this.client.post(`${collection}?fieldValidation=Strict`, { metadata: { name }, data: { a: 'b' } });
    assert.equal(created.status, 201, `an ordinary create still works: ${JSON.stringify(created.json)}`);
    assert.ok(Array.isArray(created.json.metadata.managedFields), 'managedFields are still written');
    const unknown = await this.client.post(`${collection}?fieldValidation=Strict`, { metadata: { name: `${name}-x` }, bogus: 1 });
    assert.equal(unknown.status, 400, 'fieldValidation=Strict still refuses unknown fields');
    assert.equal((await this.client.delete(`${collection}/${name}`)).status, 200);
  }
}

/**
 * Runs `request` while asking /readyz on `probe` again and again until it
 * answers: the server must stay responsive (a request that holds the event
 * loop holds every other one). The bound is the 1 s, stretched by
 * how slow this shared machine is at the moment, measured just before as
 * the slowest of three /readyz round trips (ten of them on top of the
 * second): a loaded CI machine does not fail the test, a frozen loop (tens
 * of seconds before the bounds) still does. Each probe also races a timer,
 * so a server in another process that never answers fails the test at once.
 */
export async function assertReadyWhile<T>(probe: Pick<TestClient, 'get'>, request: () => Promise<T>, what: string): Promise<T> {
  let idleMs = 0;
  for (let i = 0; i < 3; i++) {
    const asked = performance.now();
    assert.equal((await probe.get('/readyz')).status, 200);
    idleMs = Math.max(idleMs, performance.now() - asked);
  }
  const limitMs = 1000 + 10 * idleMs;
  let running = true;
  const pending = request().finally(() => { running = false; });
  pending.catch(() => {}); // its failure is the caller's to see, after the probes
  let slowest = 0;
  do {
    const asked = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      probe.get('/readyz').then((r) => r.status),
      new Promise<string>((resolve) => { timer = setTimeout(() => resolve(`no answer within ${Math.round(limitMs)} ms`), limitMs); }),
    ]).finally(() => clearTimeout(timer));
    slowest = Math.max(slowest, performance.now() - asked);
    assert.equal(ready, 200, `/readyz answers while ${what}`);
  } while (running);
  assert.ok(slowest < limitMs, `/readyz took ${Math.round(slowest)} ms while ${what} (limit ${Math.round(limitMs)} ms: 1 s and ten idle round trips of ${Math.round(idleMs)} ms)`);
  return pending;
}
