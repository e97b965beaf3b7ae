// Key pairs and key formats. node:crypto generates and converts keys (native,
// fast, reads every PEM flavour); webcrypto is only needed to sign with
// @peculiar/x509, so keys are imported there at the last moment.

import { createPrivateKey, createPublicKey, generateKeyPair, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { splitPem } from '../machinery/pem.js';

export interface KeyPairPem {
  /** PKCS#8 (`PRIVATE KEY`). */
  privateKeyPem: string;
  /** SubjectPublicKeyInfo (`PUBLIC KEY`). */
  publicKeyPem: string;
}

const pemEncoding = {
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
} as const;

// The callback form runs on libuv's thread pool, so RSA generation does not
// block the event loop.
function pemCallback(resolve: (pair: KeyPairPem) => void, reject: (error: Error) => void) {
  return (error: Error | null, publicKeyPem: string, privateKeyPem: string) =>
    error ? reject(error) : resolve({ privateKeyPem, publicKeyPem });
}

/** ECDSA P-256: small and fast, what we use for certificates. */
export function generateEcKeyPair(): Promise<KeyPairPem> {
  return new Promise((resolve, reject) =>
    generateKeyPair('ec', { namedCurve: 'prime256v1', ...pemEncoding }, pemCallback(resolve, reject)),
  );
}

/** RSA: what service-account tokens (RS256) are signed with. */
export function generateRsaKeyPair(modulusLength = 2048): Promise<KeyPairPem> {
  return new Promise((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength, ...pemEncoding }, pemCallback(resolve, reject)),
  );
}

const privateKeyLabels = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);
const publicKeyLabels = new Set(['PUBLIC KEY', 'RSA PUBLIC KEY', 'CERTIFICATE']);

/**
 * The first private key in `text` (PKCS#8, PKCS#1 or SEC1), re-encoded as
 * PKCS#8 so that every consumer (jose, webcrypto) can read it.
 */
export function normalizePrivateKeyPem(text: string, source = 'input'): string {
  const block = splitPem(text).find((candidate) => privateKeyLabels.has(candidate.label));
  if (!block) throw new Error(`${source}: no private key PEM block found`);
  return privateKeyFromBlock(block.label, block.der).export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * Every public key in `text` as SPKI PEM. Like the upstream
 * --service-account-key-file, a file may hold public keys, certificates
 * (their keys are taken) or private keys (their public halves are taken).
 */
export function publicKeyPemsFrom(text: string, source = 'input'): string[] {
  const keys: string[] = [];
  for (const block of splitPem(text)) {
    let key: KeyObject;
    if (privateKeyLabels.has(block.label)) key = createPublicKey(privateKeyFromBlock(block.label, block.der));
    else if (publicKeyLabels.has(block.label)) key = publicKeyFromBlock(block.label, block.der);
    else continue;
    keys.push(key.export({ type: 'spki', format: 'pem' }).toString());
  }
  if (keys.length === 0) throw new Error(`${source}: no public key, certificate or private key PEM block found`);
  return keys;
}

/** SPKI PEM of a private key's public half. */
export function publicKeyPemOf(privateKeyPem: string): string {
  return createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
}

/** SPKI DER of any public key, private key or certificate PEM (first block). */
export function spkiDerOf(keyPem: string): Uint8Array<ArrayBuffer> {
  const [first] = publicKeyPemsFrom(keyPem);
  return new Uint8Array(createPublicKey(first!).export({ type: 'spki', format: 'der' }));
}

function privateKeyFromBlock(label: string, der: Buffer): KeyObject {
  const type = label === 'RSA PRIVATE KEY' ? 'pkcs1' : label === 'EC PRIVATE KEY' ? 'sec1' : 'pkcs8';
  return createPrivateKey({ key: der, format: 'der', type });
}

function publicKeyFromBlock(label: string, der: Buffer): KeyObject {
  if (label === 'CERTIFICATE') return new X509Certificate(der).publicKey;
  return createPublicKey({ key: der, format: 'der', type: label === 'RSA PUBLIC KEY' ? 'pkcs1' : 'spki' });
}

/** A webcrypto signing key plus the signature algorithm that goes with it. */
export interface SigningKey {
  key: webcrypto.CryptoKey;
  /** Passed to the certificate generator as its `signingAlgorithm`. */
  algorithm: { name: string; hash?: string };
}

const curveNames: Record<string, { webcrypto: string; hash: string }> = {
  prime256v1: { webcrypto: 'P-256', hash: 'SHA-256' },
  secp384r1: { webcrypto: 'P-384', hash: 'SHA-384' },
  secp521r1: { webcrypto: 'P-521', hash: 'SHA-512' },
};

/** Imports a PEM private key (any flavour) into webcrypto for signing. */
export async function importSigningKey(privateKeyPem: string): Promise<SigningKey> {
  const keyObject = createPrivateKey(normalizePrivateKeyPem(privateKeyPem, 'signing key'));
  const pkcs8 = keyObject.export({ type: 'pkcs8', format: 'der' });
  const subtle = webcrypto.subtle;
  switch (keyObject.asymmetricKeyType) {
    case 'ec': {
      const curve = curveNames[keyObject.asymmetricKeyDetails?.namedCurve ?? ''];
      if (!curve) throw new Error(`unsupported EC curve ${keyObject.asymmetricKeyDetails?.namedCurve}`);
      const key = await subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: curve.webcrypto }, false, ['sign']);
      return { key, algorithm: { name: 'ECDSA', hash: curve.hash } };
    }
    case 'rsa': {
      const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      return { key: await subtle.importKey('pkcs8', pkcs8, algorithm, false, ['sign']), algorithm };
    }
    case 'ed25519': {
      const algorithm = { name: 'Ed25519' };
      return { key: await subtle.importKey('pkcs8', pkcs8, algorithm, false, ['sign']), algorithm };
    }
    default:
      throw new Error(`unsupported signing key type ${keyObject.asymmetricKeyType}`);
  }
}
