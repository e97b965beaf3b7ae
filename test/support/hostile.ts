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
