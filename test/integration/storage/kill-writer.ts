// Child process for the kill -9 test: writes keys from 16 concurrent callers
// and prints each key once its write is acknowledged.
// Usage: node kill-writer.js <store path> <number of keys>

import { writeSync } from 'node:fs';
import { openSqliteBackend } from '../../../src/storage/sqlite/store.js';

const [path, countText] = process.argv.slice(2);
const store = openSqliteBackend(path!);
const total = Number(countText);
let next = 0;

async function caller(): Promise<void> {
  while (next < total) {
    const key = `/kill/${String(next++).padStart(8, '0')}`;
    await store.create(key, Buffer.from(JSON.stringify({ key })));
    // Synchronous, so a printed key has left this process before the next write.
    writeSync(1, `${key}\n`);
  }
}

await Promise.all(Array.from({ length: 16 }, caller));
await store.close();
