// Loads @peculiar/x509 on first use. Loading costs ~130 ms, which a restart
// that only re-reads existing PEM files should not pay.

import { webcrypto } from 'node:crypto';
import { installReflectMetadataShim } from './reflect-shim.js';

export type X509Lib = typeof import('@peculiar/x509');

let loading: Promise<X509Lib> | undefined;

export function loadX509(): Promise<X509Lib> {
  loading ??= (async () => {
    installReflectMetadataShim();
    const lib = await import('@peculiar/x509');
    lib.cryptoProvider.set(webcrypto as unknown as Crypto);
    return lib;
  })();
  return loading;
}
