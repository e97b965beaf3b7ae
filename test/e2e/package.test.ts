// The package as another project takes it: `npm pack`, installed from the
// tarball into an empty folder with nothing downloaded (the lockfile names
// the dependencies' tarballs, which npm's cache holds), then a TypeScript
// program using both entry points (the README's client example among it)
// type-checked against the shipped declarations and its client part run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: 180_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** The fenced block after `<!-- snippet: name -->`. */
function snippet(name: string): string {
  const at = readme.indexOf(`<!-- snippet: ${name} -->`);
  assert.ok(at >= 0, `README has no snippet ${name}`);
  return /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(at))![1]!;
}

/**
 * A lockfile for a project depending on the tarball: the package's runtime
 * dependencies (and @types/node, which a TypeScript user has) exactly as the
 * repository's lockfile resolves them, so `npm ci --offline` needs no registry.
 */
function lockfileFor(tarball: string): { manifest: object; lock: object } {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dependencies = { 'plat-apiserver': `file:${tarball}`, '@types/node': pkg.devDependencies['@types/node'] };
  const packages: Record<string, unknown> = { '': { name: 'consumer', dependencies } };
  const typesOnly = new Set(['node_modules/@types/node', 'node_modules/undici-types']);
  for (const [path, entry] of Object.entries(lock.packages as Record<string, { dev?: boolean }>)) {
    if (!path || (entry.dev && !typesOnly.has(path))) continue;
    const { dev: _dev, ...rest } = entry;
    packages[path] = rest;
  }
  packages['node_modules/plat-apiserver'] = { version: pkg.version, resolved: `file:${tarball}`, dependencies: pkg.dependencies };
  return {
    manifest: { name: 'consumer', private: true, type: 'module', dependencies },
    lock: { name: 'consumer', lockfileVersion: 3, requires: true, packages },
  };
}

test('npm pack installs in an empty project, and a TypeScript program type-checks against both entry points', { timeout: 300_000 }, async () => {
  const dir = tempDir('plat-pack-');
  const packed = JSON.parse(await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], root)) as { filename: string; files: { path: string }[] }[];
  const files = packed[0]!.files.map((f) => f.path);
  assert.ok(files.includes('dist/src/index.d.ts') && files.includes('dist/src/client/index.d.ts'), 'the declarations ship');
  assert.ok(!files.some((f) => f.startsWith('dist/test/') || f.startsWith('dist/bench/')), 'tests and benches stay out');

  const project = join(dir, 'consumer');
  mkdirSync(project);
  const { manifest, lock } = lockfileFor(join(dir, packed[0]!.filename));
  writeFileSync(join(project, 'package.json'), JSON.stringify(manifest));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(lock));
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project);

  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'] } }));
  writeFileSync(join(project, 'server.ts'), `${snippet('typescript')}
import type { ServerOptions } from 'plat-apiserver';
// @ts-expect-error: a port is a number (were the types missing, this line would not be an error, and tsc would say so)
const wrong: Partial<ServerOptions> = { securePort: 'x' };
void wrong;
`);
  writeFileSync(join(project, 'readme-client.ts'), snippet('client'));
  writeFileSync(join(project, 'client.ts'), `import { RemoteClient, StatusError, type ApiObject, type WatchEvent } from 'plat-apiserver/client';
export async function more(client: RemoteClient): Promise<string[]> {
  const cms = await client.resource({ group: '', resource: 'configmaps' });
  const names: string[] = [];
  for await (const cm of cms.listAll({ pageSize: 50 })) names.push(cm.metadata?.name);
  for await (const e of cms.watch({ resourceVersion: '1' })) { const t: WatchEvent['type'] = e.type; names.push(t); break; }
  try { await cms.get('x'); } catch (e) { if (e instanceof StatusError) names.push(e.reason); }
  const o: ApiObject = await cms.apply({ metadata: { name: 'a' } }, { fieldManager: 'me', force: true });
  // @ts-expect-error: apply needs a field manager
  await cms.apply(o, {});
  const pod = await client.typed('Pod').get('p');
  const image: string | undefined = pod.spec?.containers[0]?.image;
  // @ts-expect-error: a container's image is a string
  const wrong: number | undefined = pod.spec?.containers[0]?.image;
  names.push(String(image), String(wrong));
  return names;
}
`);
  await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'], project);

  // The client entry loads by its exported path (the server's needs better-sqlite3 built, which --ignore-scripts skipped).
  const loaded = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('plat-apiserver/client'); console.log(typeof m.RemoteClient, typeof m.loadKubeconfig)"], project);
  assert.equal(loaded.trim(), 'function function');
  // The command is the bundle (scripts/bundle.mjs), and runs from the installed package.
  assert.ok(files.includes('dist/bin/plat-apiserver.js'), 'the bundled command ships');
  const installed = join(project, 'node_modules/plat-apiserver');
  const bin = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['plat-apiserver']!;
  assert.equal(bin, 'dist/bin/plat-apiserver.js');
  const version = await run(process.execPath, [join(installed, bin), '--version'], project);
  assert.match(version, /^plat-apiserver v\d+\.\d+\.\d+\+plat\.\d+\.\d+\.\d+\n$/);
});
