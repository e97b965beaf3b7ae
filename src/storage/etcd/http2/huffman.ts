// The Huffman code of HPACK (RFC 7541, Appendix B), decoding only: we send
// header values as plain literals, and etcd may send its own Huffman-coded.
// The code is canonical: codes of one length are consecutive, in the order
// of their symbols, and each length's first code follows the last of the
// shorter lengths. So the table below is only each symbol's code length
// (256 bytes and EOS), from which the decoder builds its tables.

/** Code length in bits of each symbol 0–255 and of EOS (256), as the RFC's table lists them. */
const codeLengths = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0–15
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16–31
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, //          ' ' to '/'
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, //               '0' to '?'
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, //                 '@' to 'O'
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, //              'P' to '_'
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, //                 '`' to 'o'
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, //             'p' to 127
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128–143
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144–159
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160–175
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176–191
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192–207
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208–223
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224–239
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240–255
  30, //                                                              EOS
];

const EOS = 256;
const maxLength = 30;

/**
 * The decoding tables of the canonical code: for each length, the first
 * code of that length, how many codes have it, and where its symbols start
 * in `symbols` (all symbols sorted by length, then by value).
 */
const firstCode = new Array<number>(maxLength + 2).fill(0);
const countOf = new Array<number>(maxLength + 2).fill(0);
const symbolStart = new Array<number>(maxLength + 2).fill(0);
const symbols: number[] = [];
for (let length = 1; length <= maxLength; length++) {
  symbolStart[length] = symbols.length;
  for (let symbol = 0; symbol <= EOS; symbol++) if (codeLengths[symbol] === length) symbols.push(symbol);
  countOf[length] = symbols.length - symbolStart[length]!;
}
for (let length = 1, code = 0; length <= maxLength; length++) {
  firstCode[length] = code;
  code = (code + countOf[length]!) * 2;
}

/** The code of `symbol` (for tests: the table checked against the RFC's). */
export function huffmanCode(symbol: number): { code: number; length: number } {
  const length = codeLengths[symbol]!;
  return { code: firstCode[length]! + symbols.indexOf(symbol, symbolStart[length]) - symbolStart[length]!, length };
}

/** Decodes a Huffman-coded string; throws on EOS, on padding longer than 7 bits or not all ones (RFC 7541, 5.2). */
export function decodeHuffman(bytes: Uint8Array): string {
  let out = '';
  let code = 0;
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1);
      length++;
      const offset = code - firstCode[length]!;
      if (offset < countOf[length]!) {
        const symbol = symbols[symbolStart[length]! + offset]!;
        if (symbol === EOS) throw new Error('HPACK: a Huffman string holds EOS');
        out += String.fromCharCode(symbol);
        code = 0;
        length = 0;
      } else if (length >= maxLength) {
        throw new Error('HPACK: an invalid Huffman code');
      }
    }
  }
  // What is left must be a prefix of EOS (all ones), at most 7 bits.
  if (length > 7 || code !== 2 ** length - 1) throw new Error('HPACK: invalid Huffman padding');
  return out;
}
