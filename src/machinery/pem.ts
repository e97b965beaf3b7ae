// PEM text <-> DER bytes. Files handed to us by operators often hold several
// blocks (bundles, key + certificate), so everything here works on lists.

export interface PemBlock {
  /** The word(s) between BEGIN and the dashes, e.g. `CERTIFICATE`, `PRIVATE KEY`. */
  label: string;
  der: Buffer;
  /** The block carries RFC 1421 headers (`Proc-Type: ...`) before its base64 body. */
  hasHeaders: boolean;
}

const blockPattern = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** Every PEM block in `text`, in order; text outside blocks is ignored. */
export function splitPem(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(blockPattern)) {
    const lines = match[2]!.split('\n');
    const body = lines.filter((line) => !line.includes(':'));
    blocks.push({ label: match[1]!, der: Buffer.from(body.join('').replace(/\s+/g, ''), 'base64'), hasHeaders: body.length !== lines.length });
  }
  return blocks;
}

/** Encodes DER as a PEM block with 64-column lines and a trailing newline. */
export function toPem(label: string, der: Uint8Array | ArrayBuffer): string {
  const base64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64');
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** The certificates of a bundle, each re-encoded as its own PEM block. */
export function certificatePems(text: string): string[] {
  return splitPem(text)
    .filter((block) => block.label === 'CERTIFICATE')
    .map((block) => toPem('CERTIFICATE', block.der));
}

/** Joins PEM texts into one bundle, one block after another with no blank gaps. */
export function joinPem(pems: readonly string[]): string {
  return pems.map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)).join('');
}
