import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/index.js';
import { checkCode } from '../../src/code/decide.js';
import { listCodeFiles } from '../../src/code/files.js';
import { loadTypeScript } from '../../src/code/load.js';
import { scanCode } from '../../src/code/scan.js';
import type { CodeSite, TtlValue } from '../../src/code/types.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * What `--code` cannot know, it says it cannot know: options that may or may not set the TTL are not the
 * library's default, a TTL that differs by branch is computed, and one literal two locks would write
 * differently is left alone for both. Each with its control: the readable form is read.
 */

const ts = await loadTypeScript('check');

function scan(files: Record<string, string>): string[] {
  const dir = realpathSync(tempDir('ttl-advisor-ambiguous-'));
  mkdirSync(join(dir, 'src'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'src', name), text);
  return scanCode(ts, listCodeFiles([join(dir, 'src')], dir), dir).sites.map(
    (s) => `${s.at.line} ${s.call} ${s.ttl?.option}=${s.ttl?.valueMs ?? '?'} ${s.ttl?.libraryDefault ? 'default, ' : ''}${s.ttl?.literal?.text === '' ? 'inserted' : s.ttl?.literal ? `"${s.ttl.literal.text}"` : s.ttl?.why?.kind}`,
  );
}

const HEAD = ["import { withLock } from 'ttl-advisor';", "import { Mutex } from 'redis-semaphore';", "import { Redis } from 'ioredis';", 'const redis = new Redis();', 'declare const isDev: boolean;', 'declare function makeOptions(): { lockTimeout?: number };', 'const TTL = 8000;'];

describe('--code reads only what the code says', () => {
  it('a TTL that differs by branch, or hides in a call, a rest or a computed name, is computed — not a literal, not the default', () => {
    const lines = [
      ...HEAD,
      "export const a = () => withLock(redis, 'a:lock', async () => {}, isDev ? { ttlMs: 5_000 } : { ttlMs: 60_000 });",
      "export const b = () => withLock(redis, 'b:lock', async () => {}, isDev ? { ttlMs: 5_000 } : { ttlMs: 5_000 });",
      "export const c = () => new Mutex(redis, 'c:lock', makeOptions());",
      "export const d = (name: string) => new Mutex(redis, 'd:lock', { [name]: 2000 });",
      "export const e = (o: { lockTimeout?: number; x?: number }) => { const { x, ...rest } = o; return new Mutex(redis, 'e:lock', { ...rest }); };",
      // The controls: the same constant on both sides, a spread of nothing, no options at all.
      "export const f = () => withLock(redis, 'f:lock', async () => {}, isDev ? { ttlMs: TTL } : { ttlMs: TTL });",
      "export const g = () => withLock(redis, 'g:lock', async () => {}, { ...null, ...undefined, ttlMs: 9000 });",
      "export const h = () => new Mutex(redis, 'h:lock');",
      "export const i = () => new Mutex(redis, 'i:lock', isDev ? undefined : {});",
    ];
    expect(scan({ 'locks.ts': lines.join('\n') })).toEqual([
      '8 withLock ttlMs=? computed',
      '9 withLock ttlMs=? computed',
      '10 new Mutex lockTimeout=? computed',
      '11 new Mutex lockTimeout=? computed',
      '12 new Mutex lockTimeout=? computed',
      '13 withLock ttlMs=8000 "8000"',
      '14 withLock ttlMs=9000 "9000"',
      '15 new Mutex lockTimeout=10000 default, inserted',
      '16 new Mutex lockTimeout=10000 default, default-not-insertable',
    ]);
  });
});

describe('one literal two locks would write differently', () => {
  const dir = realpathSync(tempDir('ttl-advisor-conflict-'));
  const every = analyze([buildDb(dir, 'every.db')], { nowMs: Date.UTC(2026, 10, 30) });
  // The two patterns the sites name; the data's others would fail as patterns no site governs.
  const analysis = { ...every, patterns: every.patterns.filter((p) => p.pattern === 'payment:lock:order:{id}' || p.pattern === 'report:lock:tenant:{id}') };
  const value = (option: string, valueMs: number, start: number, role: TtlValue['role'] = 'ttl'): TtlValue => ({
    option,
    role,
    valueMs,
    declaration: { file: 'src/ttl.ts', line: start + 1 },
    literal: { path: '/repo/src/ttl.ts', start: start * 10, end: start * 10 + String(valueMs).length, text: String(valueMs) },
    why: undefined,
    msPerUnit: 1,
  });
  const site = (line: number, pattern: string, ttl: TtlValue, renewals: TtlValue[] = []): CodeSite => ({
    at: { file: 'src/locks.ts', line },
    library: 'redis-semaphore',
    call: 'new Mutex',
    pattern,
    keyText: pattern,
    ttl,
    renewals,
    patterns: [pattern],
    via: [],
  });
  // payment's TTL must rise to 16.3 s; report's 5 min falls to 3 s, and its refresh interval with it.
  const payment = site(1, 'payment:lock:order:{id}', value('lockTimeout', 5000, 0));
  const report = (renewal: number) => site(2, 'report:lock:tenant:{id}', value('lockTimeout', 300_000, 1), [value('refreshInterval', 5000, renewal, 'renew')]);

  it('is left alone for both, each saying why; apply would change neither, so neither fails', () => {
    const result = checkCode({ sites: [payment, report(0)], skipped: [] }, analysis, undefined, {});
    const rows = result.rows.map((r) => ({ line: r.site.at.line, edits: r.edits.length, leftAlone: r.leftAlone, level: r.level }));
    const shared = { kind: 'shared', patterns: ['payment:lock:order:{id}', 'report:lock:tenant:{id}'] };
    expect(rows).toEqual([
      { line: 1, edits: 0, leftAlone: shared, level: 'warn' },
      { line: 2, edits: 0, leftAlone: shared, level: 'warn' },
    ]);
    expect(result.exitCode).toBe(0);
  });

  it('control: a refresh interval of its own moves with its TTL, and payment’s TTL is raised', () => {
    const result = checkCode({ sites: [payment, report(2)], skipped: [] }, analysis, undefined, {});
    expect(result.rows.map((r) => r.edits.map((e) => `${e.value.option} ${e.text}`))).toEqual([['lockTimeout 16300'], ['lockTimeout 3000', 'refreshInterval 50']]);
    expect(result.exitCode).toBe(1);
  });
});
