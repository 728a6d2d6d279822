import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listCodeFiles } from '../../src/code/files.js';
import { loadTypeScript } from '../../src/code/load.js';
import { scanCode } from '../../src/code/scan.js';
import { SqliteRecorder, type LockSample } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { fixtureNames, score, SERVICES, truthOf, type TruthSite } from './corpus.js';

/**
 * Issue 46: `check --code` on ten fixture services, each modelled on a real public service that takes
 * Redis locks (test/fixtures/services/README.md names them and their commits), against each one's
 * hand-made ground truth: every lock site, its key pattern and its TTL. Then, on samples made for the
 * fixture's patterns (some locks too short for their TTL, some far too long, some fine), the exit code and
 * the edits are the ones the ground truth says, `git apply` takes the diff, and a second apply changes nothing.
 */

const ts = await loadTypeScript('check');
const dir = realpathSync(tempDir('ttl-advisor-corpus-'));
const START = Date.UTC(2026, 10, 28);
const NOW = START + 48 * 3_600_000;

describe('the corpus of real services: sites found, mapped, TTLs read', () => {
  it('finds ≥ 95 % of the sites (wrapper calls included), maps ≥ 80 % of the keys a reader maps, reads ≥ 90 % of the TTLs written', () => {
    const total = { sites: 0, found: 0, mappable: 0, mapped: 0, ttlWritten: 0, ttlRead: 0 };
    const misses: string[] = [];
    for (const name of fixtureNames()) {
      const root = join(SERVICES, name);
      const s = score(name, scanCode(ts, listCodeFiles([join(root, 'src')], root), root));
      for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += s[k];
      misses.push(...s.misses);
    }
    expect(fixtureNames()).toHaveLength(10);
    expect(total.sites).toBeGreaterThanOrEqual(100);
    expect(total.found / total.sites, misses.join('\n')).toBeGreaterThanOrEqual(0.95);
    expect(total.mapped / total.mappable, misses.join('\n')).toBeGreaterThanOrEqual(0.8);
    expect(total.ttlRead / total.ttlWritten, misses.join('\n')).toBeGreaterThanOrEqual(0.9);
  });
});

type Scenario = 'too-short' | 'too-long' | 'fine';

/** The data patterns a site stands for. */
const patternsOf = (t: TruthSite) => (t.pattern === null ? [] : (t.patternValues ?? [t.pattern]));
const ttlOf = (t: TruthSite) => t.ttlMs ?? t.libraryDefaultMs ?? null;

/**
 * One scenario per group of sites that share a pattern or a TTL declaration (so that one literal is never
 * asked to move two ways): too short (expirations, a rise), far too long (over 9 s: a fall to the 3 s floor), fine.
 */
function scenarios(sites: readonly TruthSite[]): Map<TruthSite, Scenario> {
  const parent = new Map<string, string>();
  const find = (x: string): string => (parent.get(x) === undefined || parent.get(x) === x ? x : find(parent.get(x)!));
  const join2 = (a: string, b: string) => parent.set(find(a), find(b));
  for (const t of sites) for (const n of [...patternsOf(t).map((p) => `p:${p}`), ...(t.ttlDeclaredAt ? [`d:${t.ttlDeclaredAt}`] : [])]) {
    if (!parent.has(n)) parent.set(n, n);
    join2(n, `p:${patternsOf(t)[0]}`);
  }
  const groups = [...new Set(sites.map((t) => find(`p:${patternsOf(t)[0]}`)))];
  const out = new Map<TruthSite, Scenario>();
  for (const t of sites) {
    const i = groups.indexOf(find(`p:${patternsOf(t)[0]}`));
    const minTtl = Math.min(...sites.filter((o) => find(`p:${patternsOf(o)[0]}`) === groups[i]).map((o) => ttlOf(o)!));
    const wanted: Scenario = (['too-short', 'too-long', 'fine'] as const)[i % 3]!;
    out.set(t, wanted === 'too-long' && minTtl <= 9000 ? 'too-short' : wanted);
  }
  return out;
}

/** A key of a data pattern: its placeholders filled in as the recorder's templates read them back. */
function keyOf(pattern: string, i: number): string {
  // A hash tag's braces are written doubled in a pattern, single in the key.
  return pattern.replace(/\{(id|uuid|hex)\}/g, (_, kind: string) => (kind === 'uuid' ? `6f1c2a9e-0b7d-4c3e-9a1f-${String(100_000_000_000 + i).slice(-12)}` : kind === 'hex' ? (i * 2654435761).toString(16).padStart(16, 'a') : String(1000 + (i % 97)))).replace(/\{\{/g, '{').replace(/\}\}/g, '}');
}

async function samplesFor(name: string, sites: readonly TruthSite[], chosen: Map<TruthSite, Scenario>): Promise<string> {
  const path = join(dir, `${name}.db`);
  const byPattern = new Map<string, { ttlMs: number; scenario: Scenario }>();
  for (const t of sites) for (const p of patternsOf(t)) if (!byPattern.has(p)) byPattern.set(p, { ttlMs: ttlOf(t)!, scenario: chosen.get(t)! });
  // The recorder takes the first template a key matches: the most specific first (`lock_quota_team_{id}_x` before `lock_quota_{id}_x`).
  // Patterns of placeholders only (`{id}`, `{id}_{id}`) are learned from their keys: as templates they would take literal keys too.
  const templates = [...byPattern.keys()].filter((p) => /(^|[^{])\{(id|uuid|hex)\}/.test(p) && /\p{L}/u.test(p.replace(/\{\w+\}/g, ''))).sort((a, b) => b.replace(/\{\w+\}/g, '').length - a.replace(/\{\w+\}/g, '').length);
  const recorder = new SqliteRecorder({ path, instance: name, patterns: templates });
  for (const [pattern, { ttlMs, scenario }] of byPattern) {
    for (let i = 0; i < 400; i++) {
      // Too short: a tenth of the holds outlive the TTL; too long: holds of a few ms; fine: the p99 a third of the TTL.
      const holdMs = scenario === 'too-short' ? ttlMs * (0.5 + (i % 10) * 0.07) : scenario === 'too-long' ? 5 + (i % 20) : (ttlMs / 3) * (0.9 + (i % 10) / 100);
      const sample: LockSample = { key: keyOf(pattern, i), at: START + Math.floor((i / 400) * 48 * 3_600_000), holdMs, ttlMs, outcome: holdMs >= ttlMs ? 'expired' : 'released' };
      recorder.record(sample);
    }
  }
  await recorder.close();
  expect(recorder.stats().dropped).toBe(0);
  return path;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function gitCopy(name: string): string {
  const copy = join(dir, name);
  cpSync(join(SERVICES, name), copy, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: copy, stdio: 'pipe', encoding: 'utf8' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'service');
  return copy;
}

describe.each(fixtureNames())('%s: samples made for its patterns', (name) => {
  it('check --code exits as the ground truth says, apply --code edits the lines it names (git apply takes the diff), a second apply changes nothing', async () => {
    const truth = truthOf(name);
    const sites = truth.sites.filter((t) => t.kind !== 'wrapper-inner' && patternsOf(t).length > 0 && ttlOf(t) !== null);
    const chosen = scenarios(sites);
    const db = await samplesFor(name, sites, chosen);
    const copy = gitCopy(name);
    const args = ['--code', join(copy, 'src'), '--policy', join(dir, 'none.json'), '--db', db];

    const check = await runCli(['check', ...args], NOW);
    if (process.env.CORPUS_DEBUG === name) console.log(check.stdout, (await runCli(['apply', ...args, '--dry-run'], NOW)).stdout);
    expect(check.stderr).toBe('');
    // Locks expired where a TTL is too short: the check fails, on those sites.
    const failing = sites.some((t) => chosen.get(t) === 'too-short');
    expect(check.code, check.stdout).toBe(failing ? 1 : 0);
    // Every pattern of the samples is a site's: none is in the samples and not found in the code.
    expect(check.stdout, check.stdout).not.toMatch(/In the samples, not found in the code/);

    const dry = await runCli(['apply', ...args, '--dry-run'], NOW);
    expect(dry.code, dry.stderr).toBe(0);
    const changed = new Set([...dry.stdout.matchAll(/^(?:changed|added) (\S+:\d+) /gm)].map((m) => m[1]!));
    for (const t of sites) {
      // A library's default: the option is added at the lock call (the site's, or inside the factory it calls).
      if (t.ttlFrom === 'library-default') {
        if (chosen.get(t) !== 'fine') expect(dry.stdout, `${t.at}: option added`).toMatch(new RegExp(`^added \\S+ \\w+ \\(${escape(t.pattern!)}`, 'm'));
        continue;
      }
      const at = t.ttlDeclaredAt;
      if (at === null || t.ttlFrom === 'computed') continue;
      // A literal several sites share is one TTL for their patterns (one scenario for all: see \`scenarios\`).
      if (chosen.get(t) === 'fine') expect(changed.has(at), `${t.at}: ${at} is fine, not edited\n${dry.stdout}`).toBe(false);
      // A move the evidence rules make (too short; far too long).
      else expect(changed.has(at), `${t.at} (${chosen.get(t)}): ${at} edited\n${dry.stdout}`).toBe(true);
    }
    const patch = join(dir, `${name}.patch`);
    writeFileSync(patch, dry.stdout.slice(0, dry.stdout.search(/^(changed|added|left alone|skipped|no changes) /m)));
    if (changed.size > 0) execFileSync('git', ['apply', '--check', patch], { cwd: copy });

    const applied = await runCli(['apply', ...args], NOW);
    expect(applied.code, applied.stderr).toBe(0);
    const again = await runCli(['apply', ...args], NOW);
    expect(again.stdout).toMatch(/^no changes in the code/);
    // What was written is what the dry run showed.
    const bare = (diff: string) => diff.replace(/^(diff --git|index) .*\n/gm, '').replace(/^(@@ [^@]+ @@).*$/gm, '$1');
    expect(bare(execFileSync('git', ['diff', '--no-color'], { cwd: copy, encoding: 'utf8' }))).toBe(bare(readFileSync(patch, 'utf8')));
    expect((await runCli(['check', ...args], NOW)).code).toBe(0);
  });
});
