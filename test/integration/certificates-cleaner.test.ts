// The certificate request cleaner against a real server: done requests go an
// hour after their condition was last updated, pending ones a day after
// creation, issued ones once their certificate has expired. The cleaner's
// clock is injected, and conditions are written backdated, so nothing waits.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { InformerFactory } from '../../src/client/informer.js';
import { CsrCleanerController } from '../../src/controllers/csrcleaner.js';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { clientCert, serverCa } from '../support/certs.js';
import { csrObject, opensslRequest } from '../support/csr.js';

const base = `/apis/${vocabulary.certificatesGroup}/v1/certificatesigningrequests`;
const hourMs = 60 * 60 * 1000;

describe('csrcleaner', () => {
  let s: TestServer;
  const running: { cleaner: CsrCleanerController; informers: InformerFactory }[] = [];
  const request = opensslRequest({ subject: '/CN=old' }).request;

  const startCleaner = async (now: () => number) => {
    const client = new InProcessClient(s.registry, 'test-csrcleaner');
    const informers = new InformerFactory(client);
    const cleaner = new CsrCleanerController(client, () => undefined, informers, { now });
    running.push({ cleaner, informers });
    await cleaner.start();
  };
  const exists = async (name: string) => (await s.client.get(`${base}/${name}`)).status === 200;
  const write = async (name: string, subresource: 'approval' | 'status', status: Record<string, unknown>) => {
    const csr = (await s.client.get(`${base}/${name}`)).json;
    const r = await s.client.put(`${base}/${name}/${subresource}`, { ...csr, status });
    assert.equal(r.status, 200, r.text);
  };
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');

  before(async () => {
    s = await startTestServer({ controllers: ['*', '-csrcleaner', '-csrsigning', '-csrapproving'] });
    for (const name of ['pending', 'old-approved', 'recent-denied', 'old-failed', 'expired']) {
      const r = await s.client.post(base, csrObject(name, request, 'example.com/external', ['client auth']));
      assert.equal(r.status, 201, r.text);
    }
    await write('old-approved', 'approval', { conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: ago(2 * hourMs) }] });
    await write('recent-denied', 'approval', { conditions: [{ type: 'Denied', status: 'True' }] });
    await write('old-failed', 'status', { conditions: [{ type: 'Failed', status: 'True', lastUpdateTime: ago(2 * hourMs) }] });
    const expired = await clientCert(await serverCa(s.dataDir), 'old', { notAfter: new Date(Date.now() - 60_000) });
    await write('expired', 'status', { certificate: Buffer.from(expired.cert).toString('base64') });
  });
  after(async () => {
    for (const { cleaner, informers } of running) {
      cleaner.stop();
      informers.stopAll();
    }
    await s.close();
  });

  test('removes what is due now: an hour after approval or failure, and expired certificates', async () => {
    await startCleaner(Date.now);
    for (const name of ['old-approved', 'old-failed', 'expired']) {
      await eventually(`${name} removed`, async () => !(await exists(name)));
    }
  });

  test('a day later, pending and recently denied requests are due too', async () => {
    await startCleaner(() => Date.now() + 25 * hourMs);
    for (const name of ['pending', 'recent-denied']) {
      await eventually(`${name} removed`, async () => !(await exists(name)));
    }
  });
});
