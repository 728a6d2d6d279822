import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

/**
 * The package as a user gets it: `npm pack`, installed from the tarball into a
 * folder outside the repository, next to the user's own Redis client, then used
 * from a CommonJS service, an ES module service, two strict TypeScript services
 * (no skipLibCheck, no @types/better-sqlite3) and the command line.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const home = tempDir('ttl-advisor-consumer-');
const redisUrl = inject('redisUrl');

function write(path: string, content: unknown): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
}

async function node(cwd: string, file: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [file, ...args], { cwd, timeout: 60_000 });
  return stdout;
}

// Takes 20 locks through the given client with a SqliteRecorder, closes, prints the recorder's counters.
const SERVICE_BODY = (client: 'ioredis' | 'redis') => `
const client = ${client === 'ioredis' ? 'new Redis(url)' : 'createClient({ url })'};
${client === 'redis' ? 'await client.connect();' : ''}
const recorder = new SqliteRecorder({ path: db, instance: process.argv[4] });
for (let i = 0; i < 20; i++) {
  await withLock(client, 'order:lock:product:' + (i % 4), async () => i, { ttlMs: 2000, recorder });
}
const stats = await recorder.close();
${client === 'ioredis' ? 'client.disconnect();' : 'await client.close();'}
console.log(JSON.stringify({ written: stats.written, dropped: stats.dropped, isError: new ConfigError('x') instanceof TtlAdvisorError }));
`;

/** Whether this Node loads the native addon at `path` (the repository's better-sqlite3 was built for the Node that installed it). */
function loadsHere(path: string): boolean {
  try {
    createRequire(import.meta.url)(path);
    return true;
  } catch {
    return false;
  }
}

describe('the packed package in a fresh service', () => {
  beforeAll(async () => {
    const packs = join(home, 'packs');
    mkdirSync(packs);
    // `prepack` builds dist/ (ES modules, the CommonJS bundle, both declaration trees) first.
    await run('npm', ['pack', '--pack-destination', packs, '--silent'], { cwd: ROOT, timeout: 180_000 });
    const tarball = join(packs, readdirSync(packs).find((f) => f.endsWith('.tgz'))!);
    write(join(home, 'package.json'), {
      name: 'consumer',
      private: true,
      dependencies: { 'ttl-advisor': `file:${tarball}`, ioredis: '5.9.2', redis: '5.12.1', '@types/node': '20.19.43' },
    });
    // better-sqlite3's binary as prebuild-install would download it, made from the repository's own (the same
    // version, the same Node ABI): where no prebuilt binary can be fetched (no network, or none cached), the
    // install compiled SQLite with node-gyp, about 100 s of CPU for a file that is not ours.
    // Under another Node than the repository's (.ci/run's Node 22 and 24 legs), the binary is built for that Node
    // from its headers (npm_config_nodedir), as a service's install would.
    const env: NodeJS.ProcessEnv = { ...process.env };
    const sqlite = join(ROOT, 'node_modules/better-sqlite3');
    if (loadsHere(join(sqlite, 'build/Release/better_sqlite3.node'))) {
      const prebuilds = join(home, 'prebuilds');
      mkdirSync(prebuilds);
      const { version } = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string };
      const prebuilt = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
      await run('tar', ['-czf', join(prebuilds, prebuilt), '-C', sqlite, 'build/Release/better_sqlite3.node']);
      env.npm_config_better_sqlite3_local_prebuilds = prebuilds;
    }
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: home, timeout: 600_000, env });
  }, 720_000);

  it('runs under the Node it was meant to (.ci/run names it for its Node 22 and 24 legs)', () => {
    const expected = process.env.TTL_ADVISOR_EXPECT_NODE;
    expect(process.version).toBe(expected ?? process.version);
  });

  it('installs one copy of the user’s Redis client, and no prepare script', async () => {
    const { stdout } = await run('npm', ['ls', 'ioredis', '--all', '--parseable'], { cwd: home });
    expect(stdout.trim().split('\n')).toEqual([join(home, 'node_modules/ioredis')]);
    const installed = JSON.parse(readFileSync(join(home, 'node_modules/ttl-advisor/package.json'), 'utf8'));
    expect(installed.scripts?.prepare).toBeUndefined();
    expect(Object.keys(installed.dependencies)).not.toContain('ioredis');
  });

  it('runs a lock and a recorder from CommonJS (require)', async () => {
    const dir = join(home, 'cjs-service');
    write(join(dir, 'package.json'), { type: 'commonjs' });
    write(
      join(dir, 'main.js'),
      `const { withLock, SqliteRecorder, ConfigError, TtlAdvisorError } = require('ttl-advisor');
const { Redis } = require('ioredis');
const [url, db] = process.argv.slice(2);
(async () => {${SERVICE_BODY('ioredis')}})().catch((error) => { console.error(error); process.exit(1); });`,
    );
    const out = JSON.parse(await node(dir, 'main.js', redisUrl, join(dir, 'samples.db'), 'cjs'));
    expect(out).toEqual({ written: 20, dropped: 0, isError: true });
  });

  it('runs a lock and a recorder from an ES module service, with node-redis', async () => {
    const dir = join(home, 'esm-service');
    write(join(dir, 'package.json'), { type: 'module' });
    write(
      join(dir, 'main.js'),
      `import { withLock, SqliteRecorder, ConfigError, TtlAdvisorError } from 'ttl-advisor';
import { createClient } from 'redis';
const [url, db] = process.argv.slice(2);
${SERVICE_BODY('redis')}`,
    );
    const out = JSON.parse(await node(dir, 'main.js', redisUrl, join(dir, 'samples.db'), 'esm'));
    expect(out).toEqual({ written: 20, dropped: 0, isError: true });
  });

  it.each(['commonjs', 'module'])('the lean service entry, ttl-advisor/service, from %s: a lock, a recorder and an instrumented client', async (type) => {
    const dir = join(home, `service-entry-${type}`);
    write(join(dir, 'package.json'), { type });
    const imports =
      type === 'module'
        ? `import { withLock, SqliteRecorder, ConfigError, TtlAdvisorError, instrument, instrumentationOf } from 'ttl-advisor/service';\nimport { Redis } from 'ioredis';`
        : `const { withLock, SqliteRecorder, ConfigError, TtlAdvisorError, instrument, instrumentationOf } = require('ttl-advisor/service');\nconst { Redis } = require('ioredis');`;
    write(
      join(dir, 'main.js'),
      `${imports}
const [url, db] = process.argv.slice(2);
(async () => {
  const plain = instrument(new Redis(url), { recorder: { record() {} } });
  await plain.set('svc:lock:1', 't', 'PX', 1000, 'NX');
  await plain.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, 'svc:lock:1', 't');
  const seen = instrumentationOf(plain).stats().recorded.released;
  plain.disconnect();
  if (seen !== 1) throw new Error('instrument saw ' + seen);
  ${SERVICE_BODY('ioredis')}
})().catch((error) => { console.error(error); process.exit(1); });`,
    );
    const out = JSON.parse(await node(dir, 'main.js', redisUrl, join(dir, 'samples.db'), type));
    expect(out).toEqual({ written: 20, dropped: 0, isError: true });
  });

  it.each(['commonjs', 'module'])('the root and ttl-advisor/service are one copy from %s: the same classes, one view of instrumented clients', async (type) => {
    const dir = join(home, `one-copy-${type}`);
    write(join(dir, 'package.json'), { type });
    const load =
      type === 'module'
        ? `import * as root from 'ttl-advisor';\nimport * as service from 'ttl-advisor/service';\nimport { Redis } from 'ioredis';`
        : `const root = require('ttl-advisor');\nconst service = require('ttl-advisor/service');\nconst { Redis } = require('ioredis');`;
    write(
      join(dir, 'main.js'),
      `${load}
const client = new Redis(process.argv[2], { lazyConnect: true });
root.instrument(client, { recorder: { record() {} } });
let caught = false;
try { new service.RedisLock(client, 'k', { ttlMs: -1 }); } catch (error) { caught = error instanceof root.TtlAdvisorError; }
const names = Object.keys(service).filter((name) => typeof service[name] === 'function' || typeof service[name] === 'object');
console.log(JSON.stringify({
  sameExports: names.filter((name) => root[name] !== service[name]),
  exported: names.length,
  seenAcross: service.instrumentationOf(client) !== undefined,
  errorAcross: caught,
}));
client.disconnect();`,
    );
    const out = JSON.parse(await node(dir, 'main.js', redisUrl));
    // Every value the service entry exports is the root's very own (control: there are some).
    expect(out).toEqual({ sameExports: [], exported: expect.any(Number), seenAcross: true, errorAcross: true });
    expect(out.exported).toBeGreaterThan(20);
  });

  it('its declarations type-check in a strict TypeScript service without skipLibCheck, as an ES module and as CommonJS', () => {
    // One program for both module kinds (.mts and .cts files), in process. Checked: the service's files and every
    // declaration file of ttl-advisor's (both trees), as `skipLibCheck: false` checks them; not the peers' own
    // declarations (@types/node, node-redis, ioredis: theirs to keep), which made `tsc -p` cost 12.8 s of CPU
    // against 5.0 s.
    const dir = join(home, 'ts');
    write(join(dir, 'package.json'), {});
    write(join(dir, 'tsconfig.json'), {
      compilerOptions: { strict: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, types: ['node'] },
      include: ['*.mts', '*.cts'],
    });
    for (const ext of ['mts', 'cts']) {
      write(
        join(dir, `service.${ext}`),
        `import { withLock, RedisLock, SqliteRecorder, RedisStreamSink, analyze, listLocks, type LockOptions, type PatternAnalysis } from 'ttl-advisor';
import { instrument, type InstrumentStats } from 'ttl-advisor/service';
import { Redis, Cluster } from 'ioredis';
import { createClient, createCluster } from 'redis';

export function wrapped(): InstrumentStats | undefined {
  const redis: Redis = instrument(new Redis(), { recorder: new SqliteRecorder({ path: 'samples.db' }) });
  void redis;
  return undefined;
}

export async function main(): Promise<PatternAnalysis[]> {
  const ioredis = new Redis();
  const nodeRedis = createClient();
  const options: LockOptions = { ttlMs: 5000, recorder: new SqliteRecorder({ path: 'samples.db' }) };
  const a: number = await withLock(ioredis, 'order:lock:1', async (lock) => lock.remainingMs, options);
  const b: string = await withLock(nodeRedis, 'order:lock:2', async () => 'ok', options);
  await RedisLock.acquire(new Cluster([]), 'k', options);
  await RedisLock.acquire(createCluster({ rootNodes: [] }), 'k', options);
  new RedisStreamSink(ioredis);
  new RedisStreamSink(nodeRedis);
  await listLocks(nodeRedis);
  void a;
  void b;
  return analyze(['samples.db']).patterns;
}
`,
      );
      // Control, in the same compiler run: the types are real, not `any`, in each declaration tree (ES module
      // and CommonJS), so a wrong option is caught in each — and those are the only errors.
      write(join(dir, `wrong.${ext}`), `import { withLock } from 'ttl-advisor';\nimport { Redis } from 'ioredis';\nvoid withLock(new Redis(), 'k', () => 1, { ttlMs: '5s' });\n`);
    }
    const config = ts.getParsedCommandLineOfConfigFile(join(dir, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => expect.fail(String(d.messageText)) })!;
    expect(config.options.skipLibCheck).toBe(false);
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
    const files = program.getSourceFiles();
    const ours = files.filter((f) => !f.fileName.includes('/node_modules/') || f.fileName.includes('/node_modules/ttl-advisor/'));
    // Each kind resolved its own declaration tree: dist/ for the ES module, dist/cjs/ for CommonJS.
    expect(ours.some((f) => f.fileName.endsWith('/node_modules/ttl-advisor/dist/index.d.ts'))).toBe(true);
    expect(ours.some((f) => f.fileName.endsWith('/node_modules/ttl-advisor/dist/cjs/index.d.ts'))).toBe(true);
    const diagnostics = [...config.errors, ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
    for (const f of files) diagnostics.push(...program.getSyntacticDiagnostics(f));
    for (const f of ours) diagnostics.push(...program.getSemanticDiagnostics(f));
    const errors = diagnostics
      .map((d) => {
        const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
        return `${d.file?.fileName ?? ''}(${at ? `${at.line + 1},${at.character + 1}` : ''}): error TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      })
      .sort();
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/(^|\/)wrong\.cts\(3,44\): error TS2322: Type 'string' is not assignable to type 'number'/);
    expect(errors[1]).toMatch(/(^|\/)wrong\.mts\(3,44\): error TS2322: Type 'string' is not assignable to type 'number'/);
  });

  it('its command line runs from the install, HTML report included', async () => {
    const bin = join(home, 'node_modules/.bin/ttl-advisor');
    const { stdout: version } = await run(bin, ['--version'], { cwd: home });
    expect(version.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const db = join(home, 'cjs-service/samples.db');
    const { stdout } = await run(bin, ['report', '--db', db, '--out', join(home, 'reports')], { cwd: home });
    expect(stdout).toMatch(/order:lock:product:\{id\}\s+20\b/);
    expect(readdirSync(join(home, 'reports')).sort()).toEqual(['ttl-report.html', 'ttl-report.json', 'ttl-report.md']);
  });
});
