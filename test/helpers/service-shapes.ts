import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Services wired as README shows, run with plain `node` against the package as a
 * user installs it: `ttl-advisor` in a node_modules folder, the ES module build
 * and the CommonJS build (built here with esbuild, the way `npm run build:cjs`
 * does), so the writer thread starts from built files, not through tsx.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sources(under: string, skipCli: boolean): string[] {
  const found: string[] = [];
  for (const name of readdirSync(under)) {
    const path = join(under, name);
    if (statSync(path).isDirectory()) {
      if (!(skipCli && relative(join(ROOT, 'src'), path) === 'cli')) found.push(...sources(path, skipCli));
    } else if (name.endsWith('.ts')) found.push(path);
  }
  return found;
}

/**
 * Installs the package, built from the current sources, as `<home>/node_modules/ttl-advisor`.
 * `home` must lie inside the repository, so that its dependencies (better-sqlite3,
 * ioredis) resolve from the repository's node_modules, as a user's would from theirs.
 */
export async function installBuiltPackage(home: string): Promise<void> {
  const pkg = join(home, 'node_modules/ttl-advisor');
  const common = { outbase: join(ROOT, 'src'), platform: 'node', target: 'node20', logLevel: 'warning' } as const;
  await build({ ...common, entryPoints: sources(join(ROOT, 'src'), false), outdir: join(pkg, 'dist'), format: 'esm' });
  await build({
    ...common,
    entryPoints: sources(join(ROOT, 'src'), true),
    outdir: join(pkg, 'dist/cjs'),
    format: 'cjs',
    define: { 'import.meta.url': '__moduleUrl' },
    banner: { js: "const __moduleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  writeFileSync(join(pkg, 'dist/cjs/package.json'), JSON.stringify({ type: 'commonjs' }));
  // The service's own package.json: without it the repository's would be the services' package, and
  // `ttl-advisor` would resolve to the repository itself (a package's self-reference), its dist/.
  writeFileSync(join(home, 'package.json'), JSON.stringify({ name: 'service', private: true }));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const { name, version, type, main, exports, bin } = manifest;
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name, version, type, main, exports, bin }, null, 2));
}

/**
 * How a service is wired:
 * - `script`: a recorder and its locks, nothing else (no flushOnShutdown, no close);
 * - `script+exit`: the same, ending with `process.exit()` right after its last lock;
 * - `flushOnShutdown`: README's "Wrap your locks", as it is;
 * - `flushOnShutdown+exit`: the same, ending with `process.exit()` right after its last lock;
 * - `drain`: an HTTP server whose requests take locks; on SIGTERM it closes the server and,
 *   once the requests in flight are done, its Redis client (a graceful drain);
 * - `keep-client`: `script` that leaves its own Redis client connected.
 */
export type ServiceShape = 'script' | 'flushOnShutdown' | 'flushOnShutdown+exit' | 'script+exit' | 'drain' | 'keep-client';

// argv: <redis url> <db> <shape> [recorder options as JSON]. Prints `lock <epoch ms>` after each lock
// is released, and `done` after the last; `drain` prints `listening <port>`, and `request` as each
// request arrives.
const BODY = `
const [url, db, shape, extra] = process.argv.slice(2);
const redis = new Redis(url);
const recorder = new SqliteRecorder({ path: db, ...JSON.parse(extra ?? '{}') });
if (shape.startsWith('flushOnShutdown') || shape === 'drain') flushOnShutdown(recorder);

const say = (line) => process.stdout.write(line + '\\n');
const hold = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function lock(id, holdMs) {
  await withLock(redis, 'order:lock:product:' + id, () => hold(holdMs), { ttlMs: 10_000, recorder });
  say('lock ' + Date.now());
}

if (shape === 'drain') {
  const server = http.createServer((request, response) => {
    say('request');
    const id = new URL(request.url, 'http://service').searchParams.get('id');
    lock(id, 200).then(
      () => response.end('ok'),
      (error) => { response.statusCode = 500; response.end(String(error)); },
    );
  });
  process.on('SIGTERM', () => server.close(() => redis.quit()));
  server.listen(0, '127.0.0.1', () => say('listening ' + server.address().port));
} else {
  // Longer than flushIntervalMs, so the recorder has written (and started its writer) before the end.
  const started = Date.now();
  for (let i = 0; Date.now() - started < 1200; i++) await lock(i % 10, 2);
  say('done');
  if (shape.endsWith('+exit')) process.exit(0); // at once: not one more turn of the event loop
  if (shape !== 'keep-client') await redis.quit();
}
`;

/** Writes the service as `service.mjs` (ES module, top-level await) or `service.cjs` (require, an async main). */
export function writeService(home: string, kind: 'esm' | 'cjs'): string {
  const path = join(home, kind === 'esm' ? 'service.mjs' : 'service.cjs');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path,
    kind === 'esm'
      ? `import http from 'node:http';\nimport { Redis } from 'ioredis';\nimport { SqliteRecorder, flushOnShutdown, withLock } from 'ttl-advisor';\n${BODY}`
      : `const http = require('node:http');\nconst { Redis } = require('ioredis');\nconst { SqliteRecorder, flushOnShutdown, withLock } = require('ttl-advisor');\n` +
          `(async () => {${BODY}})().catch((error) => { console.error(error); process.exitCode = 1; });\n`,
  );
  return path;
}
