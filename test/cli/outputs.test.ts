import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEMO_START_MS, DEMO_STORIES } from '../../fixtures/generate.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { IN_TIME_REDLOCK, LATE_BULLMQ, recordLeases } from '../helpers/lease-data.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Every output a user reads, byte for byte, from fixed data: the demo database's reports (terminal, Markdown,
 * HTML, JSON), `check` and `apply` on a policy file in every format, leases (late BullMQ renewals, node-redlock
 * on time), `check --code` and `apply --code` on the fixture service, and `stats`. A change that moves a byte
 * here is a change users see: the files under __outputs__ are its review (`vitest -u` writes them again).
 * The HTML's charts are large; each is kept as its hash (their specs are in the JSON's charts and tested apart).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NOW = DEMO_START_MS + 48 * 3_600_000;
const dir = realpathSync(tempDir('ttl-advisor-outputs-'));
const SNAPSHOTS = join(ROOT, 'test/cli/__outputs__');

/** The output with the temp folder's path made stable and each inline chart replaced by its hash. */
function stable(text: string): string {
  return text
    .replaceAll(dir, '<tmp>')
    .replace(/<svg[\s\S]*?<\/svg>/g, (svg) => `<svg sha256="${createHash('sha256').update(svg).digest('hex').slice(0, 16)}"/>`);
}

/** Every Markdown text the outputs hold, by name: checked for escapes inside code spans at the end. */
const markdowns = new Map<string, string>();

async function expectOutput(name: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const { code, stdout, stderr } = await runCli(args, NOW);
    if (/-md$|-github$/.test(name)) markdowns.set(name, stdout);
    await expect(stable(`exit ${code}\n--- stdout\n${stdout}--- stderr\n${stderr}`)).toMatchFileSnapshot(join(SNAPSHOTS, `${name}.txt`));
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

async function expectFile(name: string, path: string): Promise<void> {
  if (name.endsWith('.md')) markdowns.set(name, readFileSync(path, 'utf8'));
  await expect(stable(readFileSync(path, 'utf8'))).toMatchFileSnapshot(join(SNAPSHOTS, name));
}

function policy(name: string, locks: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ locks }, null, 2) + '\n');
  return path;
}

describe('what users read, byte for byte', () => {
  const demo = buildDb(dir, 'demo.db', { patterns: DEMO_STORIES });
  const every = buildDb(dir, 'every.db');

  it('report on the demo database: terminal, Markdown, HTML, JSON', async () => {
    const out = join(dir, 'demo-reports');
    await expectOutput('report-demo', ['report', '--db', demo, '--out', out]);
    await expectFile('report-demo.md', join(out, 'ttl-report.md'));
    await expectFile('report-demo.html', join(out, 'ttl-report.html'));
    await expectFile('report-demo.json', join(out, 'ttl-report.json'));
  });

  it('report on every generated pattern (hostile keys included): Markdown and JSON', async () => {
    const out = join(dir, 'every-reports');
    await expectOutput('report-every', ['report', '--db', every, '--out', out, '--format', 'md,json']);
    await expectFile('report-every.md', join(out, 'ttl-report.md'));
    await expectFile('report-every.json', join(out, 'ttl-report.json'));
  });

  it('check and apply on a policy file, in every format', async () => {
    const locks = {
      'payment:lock:order:{id}': { ttlMs: 5000 },
      'report:lock:tenant:{id}': { ttlMs: 300_000 },
      'order:lock:product:{id}': { ttlMs: 5000 },
      'cart:lock:{uuid}': { ttlMs: 3000 },
      'inventory:lock:global': { ttlMs: 3000, pinned: true },
      'mail:lock:user:{id}': { ttlMs: 3000 },
      'gone:lock:{id}': { ttlMs: 4000 },
    };
    const path = policy('demo-policy', locks);
    await expectOutput('check-md', ['check', '--policy', path, '--db', demo]);
    await expectOutput('check-strict', ['check', '--policy', path, '--db', demo, '--strict', '--fail-on-insufficient-data']);
    await expectOutput('check-json', ['check', '--policy', path, '--db', demo, '--format', 'json']);
    const summary = join(dir, 'check-summary.md');
    await expectOutput('check-github', ['check', '--policy', path, '--db', demo, '--format', 'github'], { GITHUB_STEP_SUMMARY: summary });
    await expectFile('check-github-summary.md', summary);
    await expectOutput('apply-dry-run', ['apply', '--policy', path, '--db', demo, '--dry-run']);
    const fresh = join(dir, 'init.json');
    await expectOutput('init', ['init', '--policy', fresh, '--db', demo]);
    await expectFile('init.json', fresh);
  });

  it('leases: report, check in every format, apply and init', async () => {
    const bull = await recordLeases(dir, 'bull', LATE_BULLMQ);
    const redlock = await recordLeases(dir, 'redlock', IN_TIME_REDLOCK);
    const data = ['--db', bull, '--db', redlock];
    const out = join(dir, 'lease-reports');
    await expectOutput('report-lease', ['report', ...data, '--out', out]);
    await expectFile('report-lease.md', join(out, 'ttl-report.md'));
    await expectFile('report-lease.html', join(out, 'ttl-report.html'));
    await expectFile('report-lease.json', join(out, 'ttl-report.json'));
    const path = policy('lease-policy', {
      'bull:thumbs:{id}:lock': { ttlMs: 1000, renewEveryMs: 500 },
      'order:lock:{id}': { ttlMs: 1000, extendThresholdMs: 500 },
    });
    await expectOutput('check-lease-md', ['check', '--policy', path, ...data]);
    await expectOutput('check-lease-json', ['check', '--policy', path, ...data, '--format', 'json']);
    await expectOutput('check-lease-github', ['check', '--policy', path, ...data, '--format', 'github'], { GITHUB_STEP_SUMMARY: join(dir, 'lease-summary.md') });
    await expectOutput('apply-lease-dry-run', ['apply', '--policy', path, ...data, '--dry-run']);
    const fresh = join(dir, 'lease-init.json');
    await expectOutput('init-lease', ['init', '--policy', fresh, ...data]);
    await expectFile('init-lease.json', fresh);
  });

  it('check --code and apply --code on the fixture service, in every format', async () => {
    const report = DEMO_STORIES['report:lock:tenant:{id}']!;
    const mutexes = buildDb(dir, 'mutex.db', {
      instancePrefix: 'reports',
      patterns: { 'mutex:report:lock:tenant:{id}': { ...report, key: (id) => `mutex:report:lock:tenant:${id % 40}` } },
    });
    const args = ['--code', join(ROOT, 'fixtures/code-service/src'), '--policy', join(dir, 'no-policy.json'), '--db', demo, '--db', mutexes];
    await expectOutput('check-code-md', ['check', ...args]);
    await expectOutput('check-code-json', ['check', ...args, '--format', 'json']);
    const summary = join(dir, 'code-summary.md');
    await expectOutput('check-code-github', ['check', ...args, '--format', 'github'], { GITHUB_STEP_SUMMARY: summary });
    await expectFile('check-code-github-summary.md', summary);
    await expectOutput('apply-code-dry-run', ['apply', ...args, '--dry-run']);
  });

  it('Markdown escapes nothing inside a code span but the `|` a table needs: GitHub shows a code span as written, backslashes too', () => {
    expect(markdowns.size).toBeGreaterThan(8);
    for (const [name, text] of markdowns) {
      for (const [span] of text.matchAll(/(?<!`)`[^`\n]+`(?!`)/g)) {
        expect(span.replace(/\\\|/g, ''), `${name}: ${span}`).not.toMatch(/\\[!-/:-@[-`{-~]/);
      }
    }
  });

  it('stats', async () => {
    await expectOutput('stats-demo', ['stats', '--db', demo]);
    await expectOutput('stats-every', ['stats', '--db', every]);
  });
});
