import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_STORIES, generateDatabase } from '../../fixtures/generate.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DOCS_NOW_MS, GENERATORS } from './generators.js';
import { docFiles, readPage, ROOT, where, type CodeBlock, type Page } from './markdown.js';
import { moduleTable, Resources, runCode, type Application } from './run-code.js';
import { exitCodeOf, PACKAGE_VERSION, parseShell, ttlAdvisorArgs, workflowCommands, type ShellCommand } from './shell.js';
import { typecheckBlocks, type BlockSource } from './typecheck.js';

/**
 * Every code block in README.md and docs/ that a user would paste is run here
 * (STYLE.md: examples are tested). The marker before a fence says how — see
 * docs/development.md. `DOCS_UPDATE=1` (npm run docs:examples) rewrites the
 * `output` and `generated` blocks instead of failing on them.
 */

const CODE = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs', 'cjs']);
const SHELL = new Set(['sh', 'bash', 'shell']);
const OTHER = new Set(['json', 'sql', 'yaml', 'yml']);
/** Fences that show output or a synopsis need no marker. */
const DISPLAY = new Set(['', 'text']);
const UPDATE = process.env.DOCS_UPDATE === '1';

const pages = docFiles().map(readPage);
const blocks = pages.flatMap((page) => page.blocks);
const isCommonJs = (block: CodeBlock) => ['js', 'javascript', 'cjs'].includes(block.lang) && /\brequire\(/.test(block.text) && !/^\s*import\s/m.test(block.text);
const aliasesOf = (block: CodeBlock): Record<string, string> =>
  Object.fromEntries((block.marker?.options.modules ?? '').split(',').filter(Boolean).map((pair) => pair.split(':') as [string, string]));

/** The block's text with `modules=from:to` applied, for the type checker. */
function withAliases(block: CodeBlock): string {
  let text = block.text;
  for (const [from, to] of Object.entries(aliasesOf(block))) text = text.replace(new RegExp(`(['"])${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`, 'g'), `$1${to}$1`);
  return text;
}

/** Lines without trailing blanks, for comparing output. */
const normalize = (text: string) => text.split('\n').map((l) => l.trimEnd()).join('\n').replace(/\n+$/, '');

/** Blocks to rewrite in update mode. */
const rewrites: { block: CodeBlock; text: string }[] = [];

function compareOrRewrite(block: CodeBlock, actual: string, how: string): void {
  if (normalize(block.text) === normalize(actual)) return;
  if (UPDATE) {
    rewrites.push({ block, text: normalize(actual) });
    return;
  }
  expect.fail(`${where(block)} differs from ${how}. Run \`npm run docs:examples\` to rewrite it, or make it:\n${normalize(actual)}\n`);
}

afterAll(() => {
  const byFile = new Map<string, typeof rewrites>();
  for (const r of rewrites) byFile.set(r.block.file, [...(byFile.get(r.block.file) ?? []), r]);
  for (const [file, list] of byFile) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (const { block, text } of list.sort((a, b) => b.block.line - a.block.line)) {
      lines.splice(block.line, block.endLine - block.line - 1, ...text.split('\n'));
    }
    writeFileSync(join(ROOT, file), lines.join('\n'));
    process.stderr.write(`docs:examples: rewrote ${list.length} block(s) in ${file}\n`);
  }
});

/** A block made up for a control case: one the checks must refuse. */
const controlBlock = (lang: string, text: string): CodeBlock => ({ file: '(control)', line: 0, endLine: 0, lang, text, marker: undefined, markerError: undefined });

/** What is wrong with the markers of these blocks: missing, malformed, stray, or not fit for the block. */
function markerProblems(list: readonly CodeBlock[], strays: readonly string[] = []): string[] {
  const problems = strays.map((at) => `${at}: a marker must be the line right before a fence`);
  for (const block of list) {
    const at = `${where(block)} (${block.lang || 'no language'})`;
    if (!CODE.has(block.lang) && !DISPLAY.has(block.lang) && !SHELL.has(block.lang) && !OTHER.has(block.lang)) problems.push(`${at}: unknown language \`${block.lang}\``);
    if (block.markerError) {
      problems.push(`${at}: ${block.markerError}`);
      continue;
    }
    if (!block.marker) {
      if (!DISPLAY.has(block.lang)) problems.push(`${at}: no <!-- example: run | typecheck | skip — why --> before it`);
      continue;
    }
    const { kind, name } = block.marker;
    const lang = block.lang;
    const fits =
      kind === 'skip' ||
      (kind === 'run' && (CODE.has(lang) || SHELL.has(lang) || OTHER.has(lang))) ||
      (kind === 'typecheck' && CODE.has(lang)) ||
      ((kind === 'usage' || kind === 'output') && DISPLAY.has(lang)) ||
      (kind === 'generated' && name !== undefined && name in GENERATORS);
    if (!fits) problems.push(`${at}: a \`${kind}${name ? ` ${name}` : ''}\` marker does not fit a ${lang || 'plain'} block`);
  }
  return problems;
}

describe('docs examples: markers', () => {
  it('every fence a user would paste has a marker that says how it is tested', () => {
    expect(markerProblems(blocks, pages.flatMap((page) => page.strayMarkers.map((line) => `${page.file}:${line}`)))).toEqual([]);
  });

  it('a ts, js, sh, json, sql or yaml fence without a marker fails', () => {
    const bare = ['ts', 'js', 'sh', 'json', 'sql', 'yaml'].map((lang) => controlBlock(lang, 'x'));
    expect(markerProblems(bare)).toHaveLength(bare.length);
    expect(markerProblems([controlBlock('', 'output'), controlBlock('text', 'output')])).toEqual([]);
  });
});

const code = blocks.filter((b) => CODE.has(b.lang) && (b.marker?.kind === 'run' || b.marker?.kind === 'typecheck'));

/** Blocks that must fail, to show the checks can: a wrong call from ES modules and from CommonJS. */
const CONTROLS = [
  controlBlock('ts', "import { withLock } from 'ttl-advisor';\nawait withLock(redis, key, work, { ttlMs: '10s' });"),
  controlBlock('js', "const { RedisLock } = require('ttl-advisor/service');\nRedisLock.acquire(redis);"),
];

describe('docs examples: TypeScript and JavaScript type-check against the package', () => {
  it(`${code.length} blocks, in one compiler run`, () => {
    const sources: BlockSource[] = [...code, ...CONTROLS].map((block) => ({ block, text: withAliases(block), commonJs: isCommonJs(block) }));
    const errors = typecheckBlocks(sources);
    for (const control of CONTROLS) expect(errors.get(control), control.text).not.toEqual([]);
    expect(code.flatMap((block) => errors.get(block)!)).toEqual([]);
  });
});

// The demo database of `npm run demo`, built once; each page works on a copy.
const shared = tempDir('ttl-advisor-docs-');
const demo = join(shared, 'demo.db');
// The application around the snippets, shared by all pages (one recorder, one writer thread).
const applicationResources = new Resources(join(shared, 'application'));
const pending: Promise<unknown>[] = [];
let application: Application;

beforeAll(async () => {
  generateDatabase({ path: demo, patterns: DEMO_STORIES });
  mkdirSync(applicationResources.scratchDir);
  application = await applicationFor(await moduleTable(applicationResources), examplesRedisUrl(), pending);
});

afterAll(() => applicationResources.closeAll());

/** The Redis the examples use: the suite's, in a database of their own so no key meets another test's. */
function examplesRedisUrl(): string {
  const url = new URL(inject('redisUrl'));
  url.pathname = '/7';
  return url.toString();
}

for (const page of pages) {
  const runnable = page.blocks.filter((b) => ['run', 'output', 'generated'].includes(b.marker?.kind ?? ''));
  if (runnable.length === 0) continue;
  describePage(page, runnable);
}

function describePage(page: Page, runnable: CodeBlock[]): void {
  describe(`docs examples: ${page.file}`, () => {
    const dir = join(shared, page.file.replace(/[/.]/g, '_'));
    const resources = new Resources(join(dir, '.scratch'));
    const saved = { cwd: process.cwd(), env: { ...process.env } };
    let modules: Map<string, unknown>;
    let lastStdout: string | undefined;

    beforeAll(async () => {
      mkdirSync(join(dir, '.scratch'), { recursive: true });
      copyFileSync(demo, join(dir, 'ttl-samples.db'));
      // Packages resolve from the page's folder as from the repository (the recorder's writer thread, run from source, imports tsx from there).
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      process.chdir(dir);
      process.env.REDIS_URL = examplesRedisUrl();
      delete process.env.GITHUB_STEP_SUMMARY;
      modules = await moduleTable(resources, [application.recorder as object]);
    });

    afterAll(async () => {
      await resources.closeAll();
      process.chdir(saved.cwd);
      for (const name of ['REDIS_URL', 'GITHUB_STEP_SUMMARY']) {
        if (saved.env[name] === undefined) delete process.env[name];
        else process.env[name] = saved.env[name];
      }
    });

    for (const block of runnable) {
      const { kind, name } = block.marker!;
      it(`${where(block)} ${kind}${name ? ` ${name}` : ''} (${block.lang || 'text'})`, async () => {
        if (kind === 'output') {
          if (lastStdout === undefined) expect.fail(`${where(block)}: an output block needs a command run before it`);
          return compareOrRewrite(block, lastStdout!, 'what the command before it printed');
        }
        if (kind === 'generated') return compareOrRewrite(block, await GENERATORS[name!]!(), `what the generator \`${name}\` makes of the demo`);
        if (CODE.has(block.lang)) {
          try {
            await runCode({ lang: block.lang, text: block.text, commonJs: isCommonJs(block), modules, application, aliases: aliasesOf(block) });
            await Promise.all(pending.splice(0));
          } finally {
            const problems = await resources.closeAll();
            expect(problems, where(block)).toEqual([]);
          }
          return;
        }
        if (block.lang === 'json') {
          JSON.parse(block.text);
          if (block.marker!.options.file) writeFileSync(join(dir, block.marker!.options.file), `${block.text}\n`);
          return;
        }
        if (block.lang === 'sql') return void runSql('ttl-samples.db', block.text);
        for (const copy of (block.marker!.options.demo ?? '').split(',').filter(Boolean)) copyFileSync(demo, join(dir, copy));
        const commands = SHELL.has(block.lang) ? parseShell(block.text) : workflowCommands(block.text);
        expect(commands.length, `${where(block)}: no command to run`).toBeGreaterThan(0);
        for (const command of commands) {
          lastStdout = await runShell(block, command, exitCodeOf(command.comment) ?? Number(block.marker!.options.exit ?? 0));
        }
      });
    }
  });
}

describe('docs examples: the runner can fail', () => {
  it('reads the shell the docs write, and refuses the rest', () => {
    const [command] = parseShell(`GITHUB_STEP_SUMMARY=s.md npx --yes ttl-advisor report --db 'samples-*.db' --pattern "a b"   # exit 1: why`);
    expect(command).toMatchObject({ env: { GITHUB_STEP_SUMMARY: 's.md' }, comment: 'exit 1: why' });
    expect(ttlAdvisorArgs(command!.argv)).toEqual(['report', '--db', 'samples-*.db', '--pattern', 'a b']);
    expect(exitCodeOf(command!.comment)).toBe(1);
    expect(() => parseShell('ttl-advisor report > out.txt')).toThrow(/operators/);
    expect(() => parseShell('ttl-advisor report --db "$DB"')).toThrow(/expansions/);
    const [step] = workflowCommands('        run: |\n          npx --yes ttl-advisor check --db x.db > ttl-check.md || true');
    expect(ttlAdvisorArgs(step!.argv)).toEqual(['check', '--db', 'x.db']);
    // A workflow pins the version: this package's runs, another's is a doc left behind by a release.
    const [pinned] = workflowCommands(`        run: npx --yes ttl-advisor@${PACKAGE_VERSION} check --db x.db`);
    expect(ttlAdvisorArgs(pinned!.argv)).toEqual(['check', '--db', 'x.db']);
    const [stale] = workflowCommands('        run: npx --yes ttl-advisor@0.0.1 check --db x.db');
    expect(() => ttlAdvisorArgs(stale!.argv)).toThrow(/pins another version than this package's/);
  });

  const block = controlBlock('sh', '');
  it('a command that exits otherwise than the docs say fails', async () => {
    const [command] = parseShell('npx ttl-advisor check --policy no-such-policy.json --db no-such.db');
    await expect(runShell(block, command!, 0)).rejects.toThrow(/exited 2, expected 0/);
    await expect(runShell(block, parseShell('curl https://example.com')[0]!, 0)).rejects.toThrow(/only ttl-advisor and sqlite3/);
  });

  it('a code block that throws, states a wrong value or loses samples fails', async () => {
    const resources = new Resources(shared);
    const run = async (text: string) => runCode({ lang: 'ts', text, commonJs: false, modules: await moduleTable(resources), application, aliases: {} });
    try {
      await expect(run("import { withLock } from 'ttl-advisor';\nawait withLock(redis, key, work, { ttlMs: 0 });")).rejects.toThrow(/ttlMs/);
      await expect(run("import { patternOf } from 'ttl-advisor';\npatternOf('a:1'); // → 'a:{uuid}'")).rejects.toThrow(
        /line 2 of the block says → 'a:\{uuid\}', but the value is "a:\{id\}"/,
      );
      await run(
        "import { SqliteRecorder } from 'ttl-advisor';\n" +
          "const r = new SqliteRecorder({ path: '/proc/no-such-dir/x.db', flushTimeoutMs: 500, onWarning: () => {} });\n" +
          "r.record({ key: 'a:1', holdMs: 1, ttlMs: 1000, outcome: 'released', at: Date.now() });",
      );
      expect((await resources.closeAll()).join('\n')).toMatch(/lost samples/);
    } finally {
      await resources.closeAll();
    }
  });
});

/** Runs one command of a block: ttl-advisor in this process with the docs' clock, or sqlite3 through better-sqlite3. Returns its stdout. */
async function runShell(block: CodeBlock, command: ShellCommand, expectedExit: number): Promise<string> {
  const at = `${block.file}:${block.line + command.line}: ${command.source}`;
  const saved = Object.fromEntries(Object.keys(command.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, command.env);
  try {
    const args = ttlAdvisorArgs(command.argv);
    if (args) {
      const { code, stdout, stderr } = await runCli(args, DOCS_NOW_MS);
      expect(code, `${at}\nexited ${code}, expected ${expectedExit}\nstderr: ${stderr}\nstdout: ${stdout}`).toBe(expectedExit);
      return stdout;
    }
    if (command.argv[0] === 'sqlite3' && command.argv.length === 3) return runSql(command.argv[1]!, command.argv[2]!);
    return expect.fail(`${at}\nthe docs test runs only ttl-advisor and sqlite3 commands; mark the block skip with a reason`);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Runs each statement on a samples file, as the sqlite3 shell would, up to its first row; returns those rows as text. */
function runSql(path: string, sql: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return sql
      .split(/;\s*(?:\n|$)/)
      .filter((s) => s.trim() !== '')
      .map((statement) => JSON.stringify(db.prepare(statement).get() ?? null))
      .join('\n');
  } finally {
    db.close();
  }
}

/** What a snippet may use without defining it (declared in typecheck.ts), for real: an instrumented client, a recorder, a fake app. */
async function applicationFor(modules: Map<string, unknown>, redisUrl: string, pending: Promise<unknown>[]): Promise<Application> {
  const ttlAdvisor = modules.get('ttl-advisor') as typeof import('../../src/index.js');
  const { Redis } = modules.get('ioredis') as typeof import('ioredis');
  const recorder = new ttlAdvisor.SqliteRecorder({ path: 'application.db' });
  const redis = ttlAdvisor.instrument(new Redis(redisUrl), { recorder });
  await redis.set('stock:42', '1000');
  const response = { status: () => response, json: () => response, set: () => response, end: () => response };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    app: {
      post: (_path: string, handler: (req: unknown, res: unknown) => unknown) => {
        pending.push(Promise.resolve().then(() => handler({ body: { productId: '42' } }, response)));
      },
    },
    redis,
    recorder,
    createOrder: async () => {
      await sleep(1);
      return { id: 'order-1' };
    },
    work: () => sleep(1),
    db: { query: async () => ({ rowCount: 1 }) },
    id: '42',
    key: 'order:lock:product:42',
  };
}
