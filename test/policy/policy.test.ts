import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, PolicyFileError } from '../../src/errors.js';
import { DEFAULT_POLICY_TTL_MS, formatPolicy, loadTtlPolicy, parsePolicy, TtlPolicy } from '../../src/policy/policy.js';
import { unifiedDiff } from '../../src/policy/diff.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

describe('TTL policy files', () => {
  const policy = new TtlPolicy(
    parsePolicy(`{ "locks": {
      "order:lock:product:{id}": { "ttlMs": 10000 },
      "mail:lock:user:{userId}": { "ttlMs": 5000, "pinned": true, "reason": "SMTP timeout is 4 s" },
      "inventory:lock:global": { "ttlMs": 3000 } }, "defaultTtlMs": 7000 }`),
  );

  it('maps keys to TTLs through their pattern, templates, and the default', () => {
    expect(policy.ttlFor('order:lock:product:123')).toBe(10_000);
    expect(policy.match('mail:lock:user:alice')).toEqual({ ttlMs: 5000, pattern: 'mail:lock:user:{userId}', matched: true });
    expect(policy.ttlFor('inventory:lock:global')).toBe(3000);
    expect(policy.match('cart:lock:9')).toEqual({ ttlMs: 7000, pattern: 'cart:lock:{id}', matched: false });
    expect(new TtlPolicy({ locks: {} }).ttlFor('x')).toBe(DEFAULT_POLICY_TTL_MS);
  });

  it("an entry with patternOf's own placeholders is a pattern, not a template: it never captures a literal key", () => {
    // `apply` adds entries named after the data's patterns; job:lock:{id} must not take job:lock:global's TTL.
    const added = new TtlPolicy({ locks: { 'job:lock:{id}': { ttlMs: 3000 }, 'job:{uuid}': { ttlMs: 4000 } }, defaultTtlMs: 9000 });
    expect(added.ttlFor('job:lock:42')).toBe(3000);
    expect(added.ttlFor('job:lock:global')).toBe(9000);
    expect(added.entryForPattern('job:lock:global')).toBeUndefined();
    expect(added.ttlFor('job:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11')).toBe(4000);
    expect(added.ttlFor('job:anything')).toBe(9000);
    // A placeholder of the user's naming still matches any text there.
    expect(policy.ttlFor('mail:lock:user:global')).toBe(5000);
  });

  it('an entry of a learned pattern covers its keys before this process learned the position: never shorter than the default', () => {
    // `apply` wrote lock:user:{id} from data where the names were learned; a fresh process has seen none yet.
    const fresh = new TtlPolicy({ locks: { 'lock:user:{id}': { ttlMs: 45_000 }, 'job:lock:{id}': { ttlMs: 3000 } }, defaultTtlMs: 10_000 });
    expect(fresh.ttlFor('lock:user:anna')).toBe(45_000);
    expect(fresh.match('lock:user:anna')).toMatchObject({ matched: false });
    // The shorter of the two would be unproven: the default stays (job:lock:global is no job:lock:{id}).
    expect(fresh.ttlFor('job:lock:global')).toBe(10_000);
    // One position is one position: lock:user:a:b is no lock:user:{id}.
    expect(fresh.ttlFor('lock:user:a:b')).toBe(10_000);
    // Once 33 names are seen, the position is learned here too, and the entry matches as itself.
    for (let i = 0; i < 33; i++) fresh.ttlFor(`lock:user:name${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`);
    expect(fresh.match('lock:user:zed')).toMatchObject({ ttlMs: 45_000, pattern: 'lock:user:{id}', matched: true });
  });

  it('finds the entry for a recorded pattern, exactly or through a template', () => {
    expect(policy.entryForPattern('order:lock:product:{id}')?.pattern).toBe('order:lock:product:{id}');
    expect(policy.entryForPattern('mail:lock:user:{id}')?.pattern).toBe('mail:lock:user:{userId}');
    expect(policy.entryForPattern('toString')).toBeUndefined();
  });

  it.each([
    ['{ "locks": { "a:{id}": { "ttlMs": 0 } } }', /entry "a:\{id\}": expected "ttlMs" to be a positive integer \(ms\), got 0/],
    ['{ "locks": { "a:{id}": { "ttlMs": 1.5 } } }', /got 1.5/],
    ['{ "locks": { "a:{id}": { "ttlMs": "10s" } } }', /got "10s"/],
    ['{ "locks": { "a:{id}": { "ttlMs": 100, "tll": 5 } } }', /entry "a:\{id\}": unknown field "tll"; expected ttlMs, pinned, reason/],
    ['{ "locks": { "a:{id}": { "ttlMs": 100, "pinned": "yes" } } }', /expected "pinned" to be true or false/],
    ['{ "locks": {}, "lcoks": {} }', /unknown field "lcoks"/],
    ['{ "locks": [] }', /expected "locks" to be an object/],
    ['{ "locks": { "a": 100 } }', /entry "a": expected an object like \{ "ttlMs": 10000 \}/],
    ['{ "locks": ', /invalid JSON/],
    // Where, as people count: line and column, not a byte position.
    ['{\n  "locks": {\n    "a:{id}": { "ttlMs": 100, },\n  }\n}', /invalid JSON: .* at line 3, column 31$/],
    ['[]', /expected a JSON object/],
  ])('rejects %s', (text, message) => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, text);
    const error = (() => {
      try {
        loadTtlPolicy(path);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PolicyFileError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
    expect((error as Error).message).toMatch(message);
  });

  it('a missing file is a clear error', () => {
    expect(() => loadTtlPolicy(join(dir, 'nope.json'))).toThrow(/nope\.json: no such policy file/);
  });

  it('formats one entry per line, so a TTL change is a one-line diff', () => {
    const doc = parsePolicy('{"locks":{"b:{id}":{"reason":"r","ttlMs":5,"pinned":true},"a:{id}":{"ttlMs":7}}}');
    const text = formatPolicy(doc);
    expect(text).toBe('{\n  "locks": {\n    "b:{id}": { "ttlMs": 5, "pinned": true, "reason": "r" },\n    "a:{id}": { "ttlMs": 7 }\n  }\n}\n');
    expect(parsePolicy(text)).toEqual(doc);
    const changed = formatPolicy({ locks: { ...doc.locks, 'a:{id}': { ttlMs: 9 } } });
    const diff = unifiedDiff(text, changed, 'p.json');
    expect(diff.split('\n').filter((l) => /^[-+] /.test(l))).toEqual(['-    "a:{id}": { "ttlMs": 7 }', '+    "a:{id}": { "ttlMs": 9 }']);
    expect(unifiedDiff(text, text, 'p.json')).toBe('');
  });
});

describe('policy files that JSON.parse would quietly misread', () => {
  it('an entry named __proto__ is an error naming it, not silently ignored', () => {
    expect(() => parsePolicy('{ "locks": { "__proto__": { "ttlMs": 5000 } } }', 'p.json')).toThrow('p.json: entry "__proto__": "__proto__" cannot be a lock pattern');
    // Control: what JSON.parse and a plain object make of it: no entry at all.
    const naive: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(JSON.parse('{ "__proto__": { "ttlMs": 5000 } }') as object)) naive[k] = v;
    expect(Object.keys(naive)).toEqual([]);
  });

  it('a key given twice is an error naming it and its line', () => {
    const text = '{\n  "locks": {\n    "order:lock:{id}": { "ttlMs": 5000 },\n    "order:lock:{id}": { "ttlMs": 100 }\n  }\n}\n';
    expect(() => parsePolicy(text, 'p.json')).toThrow('p.json: line 4: "order:lock:{id}" appears twice in one object');
    expect(() => parsePolicy('{ "locks": {}, "locks": { "a:{id}": { "ttlMs": 1 } } }', 'p.json')).toThrow(/"locks" appears twice/);
    // The same key in two different objects, and escapes that only look alike, are fine.
    expect(() => parsePolicy('{ "locks": { "a:{id}": { "ttlMs": 1, "reason": "ttlMs" }, "a:\\u007bx}": { "ttlMs": 2 } } }', 'p.json')).not.toThrow();
  });
});

describe("apply's diff", () => {
  const run = promisify(execFile);

  /** A git repository holding `text` as policy.json, to try the diff on. */
  async function repoWith(text: string): Promise<string> {
    const repo = mkdtempSync(join(dir, 'repo-'));
    await run('git', ['init', '-q'], { cwd: repo });
    writeFileSync(join(repo, 'policy.json'), text);
    return repo;
  }

  async function gitApplies(repo: string, diff: string, expected: string): Promise<void> {
    writeFileSync(join(repo, 'change.diff'), diff);
    await run('git', ['apply', '--check', 'change.diff'], { cwd: repo });
    await run('git', ['apply', 'change.diff'], { cwd: repo });
    expect(readFileSync(join(repo, 'policy.json'), 'utf8')).toBe(expected);
  }

  it('is a unified diff with line ranges that git apply takes, several hunks included', async () => {
    const entries = (ttl: (i: number) => number) =>
      formatPolicy({ locks: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`svc${i}:lock:{id}`, { ttlMs: ttl(i) }])) });
    const before = entries(() => 3000);
    const after = entries((i) => (i === 2 || i === 20 ? 9000 : 3000)).replace('\n  }\n}\n', ',\n    "new:lock:{id}": { "ttlMs": 4000 }\n  }\n}\n');
    const diff = unifiedDiff(before, after, './policy.json');
    expect(diff.split('\n').slice(0, 2)).toEqual(['--- a/policy.json', '+++ b/policy.json']);
    expect(diff.match(/^@@ -\d+(,\d+)? \+\d+(,\d+)? @@$/gm)).toHaveLength(3);
    expect(diff).toContain('@@ -2,7 +2,7 @@');
    await gitApplies(await repoWith(before), diff, after);
  });

  it('marks a last line without a newline, as diff does, and git apply takes that too', async () => {
    const before = '{\n  "locks": {\n    "a:{id}": { "ttlMs": 100 }\n  }\n}';
    const after = formatPolicy(parsePolicy(before.replace('100', '200')));
    const diff = unifiedDiff(before, after, 'policy.json');
    expect(diff).toContain('\\ No newline at end of file');
    await gitApplies(await repoWith(before), diff, after);
  });
});
