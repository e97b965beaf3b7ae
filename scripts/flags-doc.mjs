// Writes docs/flags.md, the flag reference, from the flag table of the built
// CLI (run `npx tsc -p .` first). A test fails when the page is out of date.
import { mkdirSync, writeFileSync } from 'node:fs';
import { flagReference } from '../dist/src/cli/flags.js';

mkdirSync(new URL('../docs/', import.meta.url), { recursive: true });
writeFileSync(new URL('../docs/flags.md', import.meta.url), flagReference());
