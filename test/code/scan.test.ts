import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listCodeFiles } from '../../src/code/files.js';
import { loadTypeScript } from '../../src/code/load.js';
import { scanCode } from '../../src/code/scan.js';
import type { CodeSite } from '../../src/code/types.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(ROOT, 'fixtures/code-service');
const ts = await loadTypeScript('check');

/** A site in one line: where, whose, which pattern, the TTL and where it is declared. */
function summary(s: CodeSite): string {
  const ttl = s.ttl ? `${s.ttl.option}=${s.ttl.valueMs ?? '?'}@${s.ttl.declaration.file.replace('fixtures/code-service/', '')}:${s.ttl.declaration.line}${s.ttl.literal ? ` "${s.ttl.literal.text}"` : ` (${s.ttl.why?.kind})`}` : 'no ttl';
  const renew = s.renewals.map((r) => ` ${r.option}=${r.valueMs}`).join('');
  return `${s.at.file.replace('fixtures/code-service/', '')}:${s.at.line} ${s.library} ${s.call} ${s.pattern ?? `not mapped (${s.keyText})`} ${ttl}${renew}`;
}

describe('scanCode: lock call sites, by their imports', () => {
  it('finds every call shape of the fixture service, ESM and CommonJS, with its pattern and the TTL’s declaration', () => {
    const sites = scanCode(ts, listCodeFiles([join(FIXTURE, 'src')], ROOT), ROOT).sites;
    expect(sites.map(summary)).toEqual([
      'src/computed.ts:18 ttl-advisor withLock not mapped (keyFor(job)) ttlMs=15000@src/computed.ts:18 "15_000"',
      'src/computed.ts:23 ttl-advisor RedisLock.acquire order:lock:product:{id} ttlMs=?@src/computed.ts:23 (computed)',
      'src/computed.ts:33 ttl-advisor new RedisLock payment:lock:order:{id} ttlMs=4000@src/computed.ts:33 (computed)',
      'src/legacy.cjs:11 redlock redlock.lock payment:lock:order:{id} ttl=5000@src/legacy-ttl.cjs:2 "5000"',
      'src/mail.cts:9 ttl-advisor RedisLock.acquire mail:lock:user:{id} ttlMs=5000@src/mail.cts:9 "5000"',
      'src/orders.ts:8 redlock redlock.using order:lock:product:{id} duration=5000@src/orders.ts:8 "5 * 1000"',
      'src/orders.ts:15 redlock redlock.acquire order:lock:product:{id} duration=5000@src/orders.ts:23 "5000"',
      'src/payment.ts:9 ttl-advisor withLock payment:lock:order:{id} ttlMs=5000@src/ttl.ts:4 "5_000"',
      'src/raw.ts:8 ioredis SET PX NX cart:lock:{id} PX=10000@src/ttl.ts:7 "10_000"',
      'src/raw.ts:15 redis SET PX NX inventory:lock:global PX=10000@src/ttl.ts:7 "10_000"',
      'src/reports.ts:9 redis-semaphore new Mutex mutex:report:lock:tenant:{id} lockTimeout=300000@src/ttl.ts:10 "5 * 60 * 1000" refreshInterval=240000',
      'src/worker.ts:5 bullmq new Worker bull:emails:{id}:lock lockDuration=30000@src/worker.ts:5 "30_000" lockRenewTime=15000',
    ]);
  });

  it('recognizes a call by its import, never by its name (control: the same calls, imported, are found)', () => {
    const dir = tempDir('ttl-advisor-scan-');
    mkdirSync(join(dir, 'src'));
    // Look-alikes: a local withLock, a Map-like `set`, a Redlock and a Mutex of the service's own.
    writeFileSync(
      join(dir, 'src/alike.ts'),
      [
        "import { Mutex } from './mutex.js';",
        'class Redlock { using(_r: string[], _ms: number, f: () => void) { f(); } }',
        'const redlock = new Redlock();',
        'async function withLock(_r: unknown, _k: string, f: () => void, _o: { ttlMs: number }) { f(); }',
        'const redis = { set: (..._a: unknown[]) => undefined };',
        "export async function run(id: number) {",
        "  await withLock(redis, `payment:lock:order:${id}`, () => {}, { ttlMs: 5000 });",
        "  redis.set(`cart:lock:${id}`, 't', 'PX', 5000, 'NX');",
        "  redlock.using([`order:lock:product:${id}`], 5000, () => {});",
        "  new Mutex(redis, 'report', { lockTimeout: 5000 });",
        '}',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'src/mutex.ts'), 'export class Mutex { constructor(..._a: unknown[]) {} }\n');
    writeFileSync(
      join(dir, 'src/real.ts'),
      [
        "import { withLock } from 'ttl-advisor';",
        "import { Redis as Client } from 'ioredis';",
        "import * as semaphore from 'redis-semaphore';",
        'const redis = new Client();',
        "export async function run(id: number) {",
        "  await withLock(redis, `payment:lock:order:${id}`, async () => {}, { ttlMs: 5000 });",
        "  await redis.set(`cart:lock:${id}`, 't', 'PX', 5000, 'NX');",
        "  new semaphore.Semaphore(redis, 'report', 3, { lockTimeout: 5000 });",
        '}',
      ].join('\n'),
    );
    const sites = scanCode(ts, listCodeFiles([join(dir, 'src')], dir), dir).sites;
    expect(sites.map((s) => `${s.at.file}:${s.at.line} ${s.library} ${s.call} ${s.pattern}`)).toEqual([
      'src/real.ts:6 ttl-advisor withLock payment:lock:order:{id}',
      'src/real.ts:7 ioredis SET PX NX cart:lock:{id}',
      'src/real.ts:8 redis-semaphore new Semaphore semaphore:report',
    ]);
  });

  it('follows TTLs and keys through constants: re-exports, CommonJS exports, const options objects', () => {
    const dir = tempDir('ttl-advisor-consts-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src/base.ts'), 'export const TTL = 5e3;\nexport const PREFIX = `job:lock`;\n');
    writeFileSync(join(dir, 'src/index.ts'), "export { TTL as JOB_TTL, PREFIX } from './base.js';\n");
    writeFileSync(
      join(dir, 'src/esm.ts'),
      [
        "import { withLock } from 'ttl-advisor';",
        "import { Redis } from 'ioredis';",
        "import { JOB_TTL, PREFIX } from './index.js';",
        'const redis = new Redis();',
        'const options = { ttlMs: JOB_TTL, autoExtend: 1_000 } as const;',
        'let changing = 3000;',
        'export const run = (id: string) => withLock(redis, `${PREFIX}:${id}`, async () => {}, options);',
        "export const other = () => withLock(redis, 'job:lock:global', async () => {}, { ttlMs: changing++ });",
      ].join('\n'),
    );
    writeFileSync(join(dir, 'src/ttl.cjs'), 'const LEASE_MS = 8000;\nmodule.exports = { LEASE_MS };\nexports.OTHER = 1;\n');
    writeFileSync(
      join(dir, 'src/cjs.cjs'),
      [
        "const { Mutex } = require('redis-semaphore');",
        "const IORedis = require('ioredis');",
        "const { LEASE_MS } = require('./ttl.cjs');",
        'const redis = new IORedis();',
        "module.exports = (id) => new Mutex(redis, 'sync:' + id, { lockTimeout: LEASE_MS });",
      ].join('\n'),
    );
    const sites = scanCode(ts, listCodeFiles([join(dir, 'src')], dir), dir).sites;
    expect(sites.map((s) => `${s.at.file}:${s.at.line} ${s.call} ${s.pattern} ${s.ttl?.valueMs}@${s.ttl?.declaration.file}:${s.ttl?.declaration.line} ${s.ttl?.literal?.text ?? s.ttl?.why?.kind}${s.renewals.map((r) => ` ${r.option}=${r.valueMs}`).join('')}`)).toEqual([
      'src/cjs.cjs:5 new Mutex mutex:sync:{id} 8000@src/ttl.cjs:1 8000',
      'src/esm.ts:7 withLock job:lock:{id} 5000@src/base.ts:1 5e3 autoExtend=1000',
      'src/esm.ts:8 withLock job:lock:global undefined@src/esm.ts:8 computed',
    ]);
  });

  it('says in one line what to install when typescript is missing', async () => {
    const missing = () => Promise.reject(Object.assign(new Error("Cannot find package 'typescript'"), { code: 'ERR_MODULE_NOT_FOUND' }));
    await expect(loadTypeScript('check', missing)).rejects.toThrow(/^check --code needs the typescript package: npm install --save-dev typescript$/);
    await expect(loadTypeScript('apply', missing)).rejects.toThrow(/^apply --code needs/);
  });
});
