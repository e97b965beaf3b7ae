import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { describe, it } from 'node:test';
import { product } from '../../../src/machinery/vocabulary.js';
import {
  KeyMaterialError,
  ensureKeyMaterial,
  generateEcKeyPair,
  issueCertificate,
  keyMaterialPaths,
  parseCertificateIdentity,
  type KeyMaterial,
} from '../../../src/pki/index.js';
import { tempDir } from './helpers.js';

const noFlags = { serviceAccountKeyFiles: [] };
const yearMs = 365 * 24 * 3600 * 1000;

async function mode(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

/** Serves TLS with `material`, connects with `client`, returns the peer certificate the server saw. */
async function handshake(
  material: Pick<KeyMaterial, 'servingCertPem' | 'servingKeyPem' | 'clientCaPem'>,
  client: { ca: string; cert: string; key: string; servername?: string },
): Promise<tls.DetailedPeerCertificate> {
  const server = tls.createServer({
    cert: material.servingCertPem,
    key: material.servingKeyPem,
    ca: material.clientCaPem,
    requestCert: true,
    rejectUnauthorized: true,
  });
  const seen = new Promise<tls.DetailedPeerCertificate>((resolve) =>
    server.once('secureConnection', (socket) => {
      resolve(socket.getPeerCertificate(true));
      socket.end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const socket = tls.connect({ host: '127.0.0.1', port, ...client });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    const peer = await seen;
    socket.destroy();
    return peer;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('ensureKeyMaterial: first start', async () => {
  const dataDir = join(await tempDir(), 'data');
  const material = await ensureKeyMaterial(dataDir, noFlags);
  const paths = keyMaterialPaths(dataDir);

  it('generates every file, keys private', async () => {
    const expected = ['admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'front-proxy-client.crt', 'front-proxy-client.key', 'sa.key', 'sa.pub'];
    assert.deepEqual((await readdir(paths.dir)).sort(), expected);
    assert.equal(material.generated.length, expected.length);
    assert.equal(await mode(dataDir), 0o700);
    assert.equal(await mode(paths.dir), 0o700);
    for (const key of [paths.caKey, paths.servingKey, paths.adminKey, paths.serviceAccountKey]) {
      assert.equal(await mode(key), 0o600, key);
    }
    assert.equal(await readFile(paths.caCert, 'utf8'), material.caCertPem);
    assert.equal(await readFile(paths.serviceAccountKey, 'utf8'), material.serviceAccountSigningKeyPem);
  });

  it('makes a ten-year ECDSA P-256 CA', () => {
    const ca = new X509Certificate(material.caCertPem);
    assert.equal(ca.ca, true);
    assert.equal(ca.subject, `CN=${product.name}-ca`);
    assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(ca.verify(ca.publicKey), 'self-signed');
    const lifetime = Date.parse(ca.validTo) - Date.parse(ca.validFrom);
    assert.ok(lifetime > 9.9 * yearMs && lifetime < 10.1 * yearMs, `lifetime ${lifetime}`);
    assert.ok(ca.checkPrivateKey(createPrivateKey(material.caKeyPem)));
  });

  it('issues a serving certificate for loopback and the in-cluster names', () => {
    const ca = new X509Certificate(material.caCertPem);
    const serving = new X509Certificate(material.servingCertPem);
    assert.ok(serving.verify(ca.publicKey));
    assert.ok(serving.checkIssued(ca));
    assert.equal(serving.ca, false);
    assert.deepEqual(serving.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    const sans = serving.subjectAltName!.split(', ');
    for (const name of [
      'DNS:localhost',
      `DNS:${product.name}`,
      `DNS:${product.name}.default`,
      `DNS:${product.name}.default.svc`,
      `DNS:${product.name}.default.svc.cluster.local`,
      'IP Address:127.0.0.1',
      'IP Address:0:0:0:0:0:0:0:1',
    ]) {
      assert.ok(sans.includes(name), `${name} in ${serving.subjectAltName}`);
    }
    assert.equal(serving.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(serving.checkIP('::1'), '::1');
    assert.equal(serving.checkHost('localhost'), 'localhost');
    const lifetime = Date.parse(serving.validTo) - Date.parse(serving.validFrom);
    assert.ok(lifetime > 0.99 * yearMs && lifetime < 1.01 * yearMs);
    assert.ok(serving.checkPrivateKey(createPrivateKey(material.servingKeyPem)));
  });

  it('issues an admin client certificate in system:masters', () => {
    const admin = new X509Certificate(material.adminCertPem);
    assert.ok(admin.checkIssued(new X509Certificate(material.caCertPem)));
    assert.deepEqual(admin.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    const identity = parseCertificateIdentity(material.adminCertPem);
    assert.equal(identity.commonName, 'admin');
    assert.deepEqual(identity.organizations, ['system:masters']);
    assert.equal(material.clientCaPem, material.caCertPem);
  });

  it('lets the admin certificate through a TLS server that requires client certificates', async () => {
    const peer = await handshake(material, {
      ca: material.caCertPem,
      cert: material.adminCertPem,
      key: material.adminKeyPem,
    });
    assert.equal(peer.subject.CN, 'admin');
    assert.equal(peer.subject.O, 'system:masters');
    assert.deepEqual(parseCertificateIdentity(peer.raw).organizations, ['system:masters']);
  });

  it('makes an RSA 2048 service-account key that signs RS256 and verifies with the public key', () => {
    const key = createPrivateKey(material.serviceAccountSigningKeyPem);
    assert.equal(key.asymmetricKeyType, 'rsa');
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    assert.match(material.serviceAccountSigningKeyPem, /^-----BEGIN PRIVATE KEY-----/);
    assert.equal(material.serviceAccountPublicKeyPems.length, 1);
    assert.match(material.serviceAccountPublicKeyPems[0]!, /^-----BEGIN PUBLIC KEY-----/);
    const signature = sign('sha256', Buffer.from('payload'), key);
    assert.ok(verify('sha256', Buffer.from('payload'), createPublicKey(material.serviceAccountPublicKeyPems[0]!), signature));
  });
});

describe('ensureKeyMaterial: restart', async () => {
  const dataDir = await tempDir();
  const first = await ensureKeyMaterial(dataDir, noFlags);
  const paths = keyMaterialPaths(dataDir);
  const files = Object.fromEntries(
    await Promise.all((await readdir(paths.dir)).map(async (name) => [name, await readFile(join(paths.dir, name))])),
  );

  it('reuses every file byte for byte and generates nothing', async () => {
    const second = await ensureKeyMaterial(dataDir, noFlags);
    assert.deepEqual(second.generated, []);
    assert.deepEqual({ ...second, generated: [] }, { ...first, generated: [] });
    for (const [name, bytes] of Object.entries(files)) {
      assert.deepEqual(await readFile(join(paths.dir, name)), bytes, name);
    }
  });

  it('re-derives a lost sa.pub from sa.key', async () => {
    await rm(paths.serviceAccountPublicKey);
    const again = await ensureKeyMaterial(dataDir, noFlags);
    assert.deepEqual(again.generated, [paths.serviceAccountPublicKey]);
    assert.deepEqual(await readFile(paths.serviceAccountPublicKey), files['sa.pub']);
  });

  it('issues only a missing leaf pair, reusing the CA', async () => {
    await rm(paths.adminCert);
    await rm(paths.adminKey);
    const again = await ensureKeyMaterial(dataDir, noFlags);
    assert.deepEqual(again.generated.sort(), [paths.adminCert, paths.adminKey].sort());
    assert.equal(again.caCertPem, first.caCertPem);
    assert.notEqual(again.adminCertPem, first.adminCertPem);
    assert.ok(new X509Certificate(again.adminCertPem).checkIssued(new X509Certificate(first.caCertPem)));
  });

  it('refuses half a pair instead of overwriting the other half', async () => {
    const caCert = await readFile(paths.caCert);
    await rm(paths.caCert);
    await assert.rejects(ensureKeyMaterial(dataDir, noFlags), (error: Error) => {
      assert.ok(error instanceof KeyMaterialError);
      assert.match(error.message, /ca\.key exists but .*ca\.crt does not/);
      return true;
    });
    await writeFile(paths.caCert, caCert);
  });

  it('refuses to make a new CA while leaves of the old one remain', async () => {
    const [caCert, caKey] = await Promise.all([readFile(paths.caCert), readFile(paths.caKey)]);
    await rm(paths.caCert);
    await rm(paths.caKey);
    await assert.rejects(ensureKeyMaterial(dataDir, noFlags), /ca\.crt is missing but .*apiserver\.crt and .*admin\.crt exist/);
    await writeFile(paths.caCert, caCert);
    await writeFile(paths.caKey, caKey);
  });
});

describe('ensureKeyMaterial: files named by flags', async () => {
  const dir = await tempDir();
  // An outside CA with its own serving and client certificates.
  const outsideCaKeys = await generateEcKeyPair();
  const outsideCa = await issueCertificate({
    commonName: 'outside-ca',
    usages: ['cert sign'],
    isCA: true,
    publicKey: outsideCaKeys.publicKeyPem,
    issuerKeyPem: outsideCaKeys.privateKeyPem,
  });
  const servingKeys = await generateEcKeyPair();
  const servingCert = await issueCertificate({
    commonName: 'outside-serving',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    usages: ['digital signature', 'server auth'],
    publicKey: servingKeys.publicKeyPem,
    issuerKeyPem: outsideCaKeys.privateKeyPem,
    issuerCertPem: outsideCa,
  });
  const clientKeys = await generateEcKeyPair();
  const clientCert = await issueCertificate({
    commonName: 'jane',
    organizations: ['devs', 'ops'],
    usages: ['digital signature', 'client auth'],
    publicKey: clientKeys.publicKeyPem,
    issuerKeyPem: outsideCaKeys.privateKeyPem,
    issuerCertPem: outsideCa,
  });
  // Service-account keys in the older PKCS#1 and SEC1 formats operators often have.
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const extraVerifier = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const files = {
    cert: join(dir, 'serving.crt'),
    key: join(dir, 'serving.key'),
    clientCa: join(dir, 'client-ca.crt'),
    signingKey: join(dir, 'sa-signing.key'),
    verifyKeys: join(dir, 'sa-verify.pem'),
    verifyCert: join(dir, 'sa-verify.crt'),
  };
  await writeFile(files.cert, servingCert);
  await writeFile(files.key, servingKeys.privateKeyPem);
  await writeFile(files.clientCa, outsideCa);
  await writeFile(files.signingKey, signing.privateKey.export({ type: 'pkcs1', format: 'pem' }));
  await writeFile(
    files.verifyKeys,
    [
      extraVerifier.privateKey.export({ type: 'sec1', format: 'pem' }),
      signing.publicKey.export({ type: 'pkcs1', format: 'pem' }),
    ].join(''),
  );
  await writeFile(files.verifyCert, outsideCa);

  const dataDir = join(dir, 'data');
  const material = await ensureKeyMaterial(dataDir, {
    tlsCertFile: files.cert,
    tlsPrivateKeyFile: files.key,
    clientCaFile: files.clientCa,
    serviceAccountSigningKeyFile: files.signingKey,
    serviceAccountKeyFiles: [files.verifyKeys, files.verifyCert],
  });
  const spki = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();

  it('serves with the given pair and generates neither a serving pair nor a service-account key', async () => {
    assert.equal(material.servingCertPem, servingCert);
    assert.equal(material.servingKeyPem, servingKeys.privateKeyPem);
    assert.deepEqual((await readdir(keyMaterialPaths(dataDir).dir)).sort(), ['admin.crt', 'admin.key', 'ca.crt', 'ca.key', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'front-proxy-client.crt', 'front-proxy-client.key']);
  });

  it('trusts the client CA bundle and still our own CA', async () => {
    assert.equal(material.clientCaPem, outsideCa + material.caCertPem);
    const outside = await handshake(material, { ca: outsideCa, cert: clientCert, key: clientKeys.privateKeyPem });
    assert.equal(outside.subject.CN, 'jane');
    assert.deepEqual(outside.subject.O, ['devs', 'ops']);
    const admin = await handshake(material, { ca: outsideCa, cert: material.adminCertPem, key: material.adminKeyPem });
    assert.equal(admin.subject.CN, 'admin');
  });

  it('signs with the given key, normalised to PKCS#8, and verifies with every given key', () => {
    assert.match(material.serviceAccountSigningKeyPem, /^-----BEGIN PRIVATE KEY-----/);
    assert.equal(spki(material.serviceAccountSigningKeyPem), spki(signing.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()));
    // Signing key's own public half first; the duplicate in the key file is dropped.
    assert.deepEqual(material.serviceAccountPublicKeyPems, [
      spki(signing.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
      spki(extraVerifier.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
      spki(outsideCa),
    ]);
  });

  it('with only verification keys given, signs with a generated key and trusts it too', async () => {
    const other = await ensureKeyMaterial(join(dir, 'data2'), { serviceAccountKeyFiles: [files.verifyCert] });
    assert.equal(other.serviceAccountPublicKeyPems.length, 2);
    assert.equal(other.serviceAccountPublicKeyPems[0], spki(other.serviceAccountSigningKeyPem));
    assert.equal(other.serviceAccountPublicKeyPems[1], spki(outsideCa));
  });

  it('rejects a certificate without its key, or the other way round', async () => {
    await assert.rejects(
      ensureKeyMaterial(dataDir, { ...noFlags, tlsCertFile: files.cert }),
      /--tls-cert-file and --tls-private-key-file must be given together/,
    );
    await assert.rejects(
      ensureKeyMaterial(dataDir, { ...noFlags, tlsPrivateKeyFile: files.key }),
      /must be given together/,
    );
  });

  it('rejects a key that does not match the certificate', async () => {
    await assert.rejects(
      ensureKeyMaterial(dataDir, { ...noFlags, tlsCertFile: files.cert, tlsPrivateKeyFile: files.signingKey }),
      /--tls-private-key-file .* does not match the certificate in --tls-cert-file/,
    );
  });

  it('names the flag and file it could not read or use', async () => {
    const missing = join(dir, 'missing.pem');
    const cases: [Partial<Parameters<typeof ensureKeyMaterial>[1]>, RegExp][] = [
      [{ tlsCertFile: missing, tlsPrivateKeyFile: files.key }, /--tls-cert-file .*missing\.pem: ENOENT/],
      [{ clientCaFile: missing }, /--client-ca-file .*missing\.pem: ENOENT/],
      [{ clientCaFile: files.key }, /--client-ca-file .*serving\.key: no CERTIFICATE/],
      [{ serviceAccountSigningKeyFile: missing }, /--service-account-signing-key-file .*missing\.pem: ENOENT/],
      [{ serviceAccountSigningKeyFile: files.cert }, /serving\.crt: no private key/],
      [{ serviceAccountKeyFiles: [missing] }, /--service-account-key-file .*missing\.pem: ENOENT/],
      [{ serviceAccountKeyFiles: [files.clientCa + '.none'] }, /--service-account-key-file/],
    ];
    // A bad flag fails before anything is generated: the data folder is not even made.
    const untouched = join(dir, 'untouched');
    for (const [options, pattern] of cases) {
      await assert.rejects(ensureKeyMaterial(untouched, { ...noFlags, ...options }), (error: Error) => {
        assert.ok(error instanceof KeyMaterialError, error.stack);
        assert.match(error.message, pattern);
        return true;
      });
    }
    await assert.rejects(stat(untouched), /ENOENT/);
    await writeFile(join(dir, 'empty.pem'), 'nothing here\n');
    await assert.rejects(
      ensureKeyMaterial(dataDir, { serviceAccountKeyFiles: [join(dir, 'empty.pem')] }),
      /empty\.pem: no public key, certificate or private key PEM block found/,
    );
  });
});
