// The server of the deprecation rows (bench/deprecation.ts): the built CLI's
// own start, with two bench kinds added once it serves, alike but for one
// thing: `widgets` is served at a current version, `oldwidgets` at a
// deprecated one (every request to it gets the Warning header, the audit
// annotations and the gauge). Same flags as the CLI.
//
//   node dist/bench/deprecated-server.js --secure-port <port> --data-dir <dir> ...

import { defineKind, type KindDeclaration } from '../src/api/kind.js';
import { t } from '../src/api/schema.js';
import * as meta from '../src/api/meta/v1.js';
import { parseFlags } from '../src/cli/flags.js';
import { startServer } from '../src/apiserver/start.js';
import { productGroup } from '../src/machinery/vocabulary.js';

export const benchGroup = productGroup('bench');

const widget = (kind: string, plural: string, version: string): KindDeclaration => ({
  group: benchGroup, version, kind, plural, scope: 'Namespaced', definitionName: `bench.${version}.${kind}`,
  schema: t.object({ apiVersion: t.string(), kind: t.string(), metadata: { ref: meta.ObjectMeta }, spec: t.object({ size: t.int32(), color: t.string() }) }),
});

const parsed = parseFlags(process.argv.slice(2));
if (!('options' in parsed)) throw new Error('deprecated-server takes the server flags only');
const server = await startServer(parsed.options);
server.registry.addKind(defineKind(widget('Widget', 'widgets', 'v1')));
server.registry.addKind(defineKind({
  ...widget('OldWidget', 'oldwidgets', 'v1beta1'),
  storedVersion: { deprecated: true, deprecatedRelease: '1.30', removedRelease: '1.35', replacement: `${benchGroup}/v1 Widget` },
}));
process.once('SIGTERM', () => { void server.shutdown().then(() => process.exit(0)); });
