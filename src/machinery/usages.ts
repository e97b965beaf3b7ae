// Certificate usages spelled the way the upstream CertificateSigningRequest
// API spells them (`spec.usages`), split into the key-usage bit string and
// the extended-key-usage OIDs of an X.509 certificate.

/** Bits of the KeyUsage extension (RFC 5280 4.2.1.3), as @peculiar/x509 numbers them. */
const keyUsageBits = {
  'digital signature': 1,
  'content commitment': 2,
  'key encipherment': 4,
  'data encipherment': 8,
  'key agreement': 16,
  'cert sign': 32,
  'crl sign': 64,
  'encipher only': 128,
  'decipher only': 256,
} as const;

const extendedKeyUsageOids = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
} as const;

export type KeyUsageName = keyof typeof keyUsageBits;
export type ExtendedKeyUsageName = keyof typeof extendedKeyUsageOids;
/** `signing` is the upstream alias of `digital signature`. */
export type CertificateUsage = KeyUsageName | ExtendedKeyUsageName | 'signing';

export const certificateUsages: readonly CertificateUsage[] = [
  'signing',
  ...(Object.keys(keyUsageBits) as KeyUsageName[]),
  ...(Object.keys(extendedKeyUsageOids) as ExtendedKeyUsageName[]),
];

export function isCertificateUsage(value: string): value is CertificateUsage {
  return (certificateUsages as readonly string[]).includes(value);
}

/** KeyUsage bits (0 when none) and EKU OIDs (deduplicated) for a usage list. */
export function splitUsages(usages: readonly CertificateUsage[]): { keyUsage: number; extendedKeyUsages: string[] } {
  let keyUsage = 0;
  const extended = new Set<string>();
  for (const usage of usages) {
    const name = usage === 'signing' ? 'digital signature' : usage;
    if (name in keyUsageBits) keyUsage |= keyUsageBits[name as KeyUsageName];
    else if (name in extendedKeyUsageOids) extended.add(extendedKeyUsageOids[name as ExtendedKeyUsageName]);
    else throw new Error(`unknown certificate usage ${JSON.stringify(usage)}`);
  }
  return { keyUsage, extendedKeyUsages: [...extended] };
}
