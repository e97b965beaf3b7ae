import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { product } from '../../../src/machinery/vocabulary.js';
import { ensureKeyMaterial, writeAdminKubeconfig } from '../../../src/pki/index.js';
import { tempDir } from '../../unit/pki/helpers.js';

const run = promisify(execFile);
const base64 = (text: string) => Buffer.from(text).toString('base64');

describe('writeAdminKubeconfig', async () => {
  const dir = await tempDir();
  const material = await ensureKeyMaterial(join(dir, 'data'), { serviceAccountKeyFiles: [] });
  const path = join(dir, 'nested', 'admin.kubeconfig');
  await writeAdminKubeconfig(path, {
    server: 'https://127.0.0.1:6443',
    caPem: material.caCertPem,
    certPem: material.adminCertPem,
    keyPem: material.adminKeyPem,
  });

  it('writes a private file and leaves no temporary file behind', async () => {
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(join(dir, 'nested')), ['admin.kubeconfig']);
  });

  it('embeds every credential and selects its context', async () => {
    const config = parse(await readFile(path, 'utf8'));
    assert.equal(config.kind, 'Config');
    assert.equal(config['current-context'], `admin@${product.name}`);
    assert.deepEqual(config.contexts, [{ name: `admin@${product.name}`, context: { cluster: product.name, user: 'admin' } }]);
    assert.deepEqual(config.clusters[0], {
      name: product.name,
      cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': base64(material.caCertPem) },
    });
    assert.equal(config.users[0].name, 'admin');
    assert.equal(config.users[0].user['client-certificate-data'], base64(material.adminCertPem));
    assert.equal(config.users[0].user['client-key-data'], base64(material.adminKeyPem));
  });

  it('is read by the real kubectl', async () => {
    const view = (jsonpath: string) =>
      run('kubectl', ['config', 'view', '--kubeconfig', path, '--raw', '-o', `jsonpath=${jsonpath}`]);
    assert.equal((await view('{.users[0].user.client-certificate-data}')).stdout, base64(material.adminCertPem));
    assert.equal((await view('{.users[0].user.client-key-data}')).stdout, base64(material.adminKeyPem));
    assert.equal((await view('{.clusters[0].cluster.server}')).stdout, 'https://127.0.0.1:6443');
    const { stdout } = await run('kubectl', ['config', 'current-context', '--kubeconfig', path]);
    assert.equal(stdout.trim(), `admin@${product.name}`);
  });

  it('replaces an existing file atomically with the new names', async () => {
    await writeAdminKubeconfig(path, {
      server: 'https://[::1]:7443',
      caPem: material.caCertPem,
      certPem: material.adminCertPem,
      keyPem: material.adminKeyPem,
      user: 'root',
      clusterName: 'dev',
      contextName: 'dev-root',
    });
    const config = parse(await readFile(path, 'utf8'));
    assert.equal(config['current-context'], 'dev-root');
    assert.deepEqual(config.contexts[0].context, { cluster: 'dev', user: 'root' });
    assert.equal(config.clusters[0].cluster.server, 'https://[::1]:7443');
    assert.deepEqual(await readdir(join(dir, 'nested')), ['admin.kubeconfig']);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });
});
