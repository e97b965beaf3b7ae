// Loads @peculiar/x509 on first use. Loading costs ~130 ms, which a restart
// that only re-reads existing PEM files should not pay.

import { webcrypto } from 'node:crypto';

export type X509Lib = typeof import('@peculiar/x509');

let loading: Promise<X509Lib> | undefined;

export function loadX509(): Promise<X509Lib> {
  loading ??= (async () => {
    // The library's dependency injection needs the Reflect metadata polyfill, as its README says.
    await import('reflect-metadata');
    const lib = await import('@peculiar/x509');
    lib.cryptoProvider.set(webcrypto as unknown as Crypto);
    return lib;
  })();
  return loading;
}
