import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { built } from './helpers/built.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';

/**
 * The rules the tree keeps (DESIGN.md), read off the imports of src/: a folder
 * per stage of a sample's path, imports that only follow that path.
 */

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const MAX_LINES = 330;

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/**
 * Every import and re-export, static or dynamic, with whether only types cross it: of our own modules
 * (`own`, `to` a file under src/) and of packages (`packages`, `to` the specifier: `typescript`, `node:fs`).
 */
function importsOf(file: string, text: string): { own: Edge[]; packages: Edge[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const own: Edge[] = [];
  const packages: Edge[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith('.')) return void packages.push({ from: file, to: specifier, typeOnly });
    const to = relative(SRC, resolve(SRC, dirname(file), specifier)).replace(/\.js$/, '.ts');
    own.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allNamedTypes = named !== undefined && ts.isNamedImports(named) && named.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier.text, clause !== undefined && (clause.isTypeOnly || (allNamedTypes && clause.name === undefined)));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) add(arg.text, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { own, packages };
}

/** `lock/redis-lock.ts` → `lock`; `index.ts` and `service.ts`, the public doors, stand alone; any other file at src/'s root → `.` (a leaf module). */
function folderOf(file: string): string {
  if (file === 'index.ts' || file === 'service.ts') return 'index';
  const slash = file.indexOf('/');
  return slash === -1 ? '.' : file.slice(0, slash);
}

const files = sourceFiles(SRC);
const texts = new Map(files.map((f) => [f, readFileSync(join(SRC, f), 'utf8')]));
const imports = files.map((f) => importsOf(f, texts.get(f)!));
const edges = imports.flatMap((i) => i.own);
const packageEdges = imports.flatMap((i) => i.packages);
const crossing = edges.filter((e) => folderOf(e.from) !== folderOf(e.to));

function violations(from: string, forbidden: readonly string[], allow: (e: Edge) => boolean = () => false): string[] {
  return crossing
    .filter((e) => folderOf(e.from) === from && forbidden.includes(folderOf(e.to)) && !allow(e))
    .map((e) => `${e.from} → ${e.to}`);
}

/** Cycles in a directed graph, each as the path that closes it. */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const walk = (node: string) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) walk(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) walk(node);
  return cycles;
}

function graphOf(list: readonly Edge[], key: (file: string) => string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const e of list) {
    const [a, b] = [key(e.from), key(e.to)];
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}

describe('architecture: the imports of src/', () => {
  it('reads a real import graph (control: the parser sees the lock importing its options)', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(edges).toContainEqual({ from: 'lock/redis-lock.ts', to: 'lock/options.ts', typeOnly: false });
    expect(edges).toContainEqual({ from: 'lock/lock-state.ts', to: 'sample/sample.ts', typeOnly: true });
    expect(edges).toContainEqual({ from: 'lock/redis-lock.ts', to: 'sample/outcome.ts', typeOnly: false });
    // The dynamic import that keeps vega out of JSON and Markdown reports is an edge too.
    expect(edges).toContainEqual({ from: 'report/index.ts', to: 'report/html.ts', typeOnly: false });
    // And the rule checks bite: pretend lock/ imported store/.
    const fake: Edge = { from: 'lock/x.ts', to: 'store/schema.ts', typeOnly: false };
    crossing.push(fake);
    try {
      expect(violations('lock', ['store'])).toEqual(['lock/x.ts → store/schema.ts']);
    } finally {
      crossing.pop();
    }
  });

  it('has no import cycle between folders', () => {
    expect(cyclesOf(graphOf(crossing, folderOf))).toEqual([]);
  });

  it('has no import cycle between files, counting only imports that load code', () => {
    expect(cyclesOf(graphOf(edges.filter((e) => !e.typeOnly), (f) => f))).toEqual([]);
  });

  it('has no import cycle between files, type-only imports included', () => {
    // A type shared both ways belongs in a module of its own (Db lives in store/format.ts, not schema.ts).
    expect(cyclesOf(graphOf(edges, (f) => f))).toEqual([]);
  });

  it('keeps sample/, the contract of every door and recorder, as light as a leaf: it imports only keys/ and leaf modules', () => {
    const heavier = crossing.filter((e) => folderOf(e.from) === 'sample' && !['.', 'keys'].includes(folderOf(e.to)));
    expect(heavier.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it("keeps the lock's hot path free of analysis, policy, reports, SQLite, the recorders and the fleet", () => {
    // What the doors share (the Sample, its outcome rules, the safe fan-out, warn-once, the key cache) comes from sample/.
    expect(violations('lock', ['analyze', 'policy', 'report', 'store', 'fleet', 'inspect', 'cli', 'record', 'metrics', 'source', 'code'])).toEqual([]);
  });

  it("keeps instrument/ (inside the user's Redis client) as lean as the lock", () => {
    expect(violations('instrument', ['analyze', 'policy', 'report', 'store', 'fleet', 'inspect', 'cli', 'lock', 'record', 'watch', 'metrics', 'source', 'code'])).toEqual([]);
  });

  it('keeps watch/ a producer like the others: no store, analysis, reports, recorders or CLI', () => {
    expect(violations('watch', ['analyze', 'policy', 'report', 'store', 'fleet', 'inspect', 'cli', 'lock', 'instrument', 'record', 'metrics', 'source', 'code'])).toEqual([]);
  });

  it('lets the doors share rules only through sample/: the rules they had each copied live there once', () => {
    const doors = ['lock', 'instrument', 'watch'];
    const uses = (door: string, file: string) => edges.some((e) => folderOf(e.from) === door && e.to === file && !e.typeOnly);
    // The safe fan-out for all three; the outcome rule for the two that see releases; the confirmed-pattern rule
    // and the key → pattern cache for the two that must tell a lock from a cache.
    for (const door of doors) expect(uses(door, 'sample/safe-recorder.ts'), door).toBe(true);
    for (const door of ['lock', 'instrument']) expect(uses(door, 'sample/outcome.ts'), door).toBe(true);
    for (const door of ['instrument', 'watch']) {
      expect(uses(door, 'sample/confirmed.ts'), door).toBe(true);
      // Patterns learned from the keys, through the one key → pattern cache.
      expect(uses(door, 'sample/learned-patterns.ts'), door).toBe(true);
    }
    expect(uses('record', 'sample/pattern-cache.ts')).toBe(true);
    expect(uses('policy', 'sample/pattern-cache.ts')).toBe(true);
    // No door keeps a warning path of its own.
    const ownWarnings = files.filter((f) => folderOf(f) !== 'sample' && /process\.emitWarning/.test(texts.get(f)!));
    expect(ownWarnings).toEqual([]);
  });

  it('keeps the store free of producers and consumers', () => {
    expect(violations('store', ['record', 'fleet', 'analyze', 'report', 'policy', 'lock', 'instrument', 'watch', 'inspect', 'cli', 'metrics', 'source', 'code'])).toEqual([]);
  });

  it('keeps metrics/ a recorder like the others: it takes samples from sample/ and keys/, and reads no store, analysis, source or CLI', () => {
    expect(violations('metrics', ['analyze', 'policy', 'report', 'store', 'fleet', 'inspect', 'cli', 'lock', 'instrument', 'watch', 'record', 'source', 'code'])).toEqual([]);
  });

  it("keeps source/ a reader into the store's rollup layout: no analysis, reports, policy, doors, recorders or CLI; of metrics/ only the names", () => {
    const forbidden = ['analyze', 'policy', 'report', 'cli', 'lock', 'instrument', 'watch', 'record', 'fleet', 'inspect', 'code', 'metrics'];
    // The metric names have one home (metrics/instruments.ts): the PromQL reads what the recorder writes.
    expect(violations('source', forbidden, (e) => e.to === 'metrics/instruments.ts')).toEqual([]);
    expect(edges).toContainEqual({ from: 'source/promql.ts', to: 'metrics/instruments.ts', typeOnly: false });
  });

  it('keeps code/ (check --code, apply --code) to the analysis and the policy: no store, reports, doors, recorders, sources or CLI', () => {
    expect(violations('code', ['report', 'cli', 'store', 'record', 'fleet', 'lock', 'instrument', 'watch', 'inspect', 'metrics', 'source'])).toEqual([]);
  });

  it('lets only code/load.ts load typescript, on demand: the rest of code/ takes its types only', () => {
    const loads = packageEdges.filter((e) => e.to === 'typescript' && !e.typeOnly).map((e) => e.from);
    // The control: the parser sees load.ts's dynamic import, and the type-only imports elsewhere in code/.
    expect(loads).toContain('code/load.ts');
    expect(packageEdges.some((e) => e.to === 'typescript' && e.typeOnly && e.from === 'code/scan.ts')).toBe(true);
    expect(loads.filter((from) => from !== 'code/load.ts')).toEqual([]);
  });

  it('keeps analysis free of presentation', () => {
    expect(violations('analyze', ['report', 'policy', 'cli'])).toEqual([]);
  });

  it('lets only cli/ import cli/', () => {
    expect(crossing.filter((e) => folderOf(e.to) === 'cli').map((e) => e.from)).toEqual([]);
  });

  it('keeps each CLI command to itself: what commands share lives in cli/, not in another command', () => {
    const between = edges.filter((e) => e.from.startsWith('cli/commands/') && e.to.startsWith('cli/commands/'));
    expect(between.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it('keeps the leaf modules at src/ free of folders', () => {
    const leafImports = edges.filter((e) => folderOf(e.from) === '.' && folderOf(e.to) !== '.');
    expect(leafImports.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it(`keeps every source file under ${MAX_LINES} lines`, () => {
    const long = files.filter((f) => texts.get(f)!.split('\n').length > MAX_LINES).map((f) => `${f}: ${texts.get(f)!.split('\n').length}`);
    expect(long).toEqual([]);
  });

  it('lets only cli/ print or exit', () => {
    const offenders = files.filter((f) => folderOf(f) !== 'cli' && /console\.(log|error|warn|info)|process\.exit\(|process\.std(out|err)\.write/.test(texts.get(f)!));
    expect(offenders).toEqual([]);
  });
});

const run = promisify(execFile);
// The JavaScript copy the global setup made (see helpers/built.ts): under tsx each child cost ~1 s of CPU more.
const SERVICE = built('test/helpers/lean-service.ts');
const TRACKER = fileURLToPath(new URL('./helpers/track-loads.mjs', import.meta.url));

describe('architecture: what a recording service loads at run time', () => {
  let redis: RedisServer;
  const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-lean-'));

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function loadsOf(mode: 'sqlite' | 'sink' | 'otel') {
    const trackFile = join(dir, `${mode}.loads`);
    const { stdout } = await run(process.execPath, ['--import', TRACKER, SERVICE, mode, redis.url, join(dir, `${mode}.db`)], {
      env: { ...process.env, TRACK_LOADS_FILE: trackFile },
    });
    const result = JSON.parse(stdout) as { written: number; sharedObjects: string[]; commonJs: string[] };
    const esm = readFileSync(trackFile, 'utf8').split('\n').filter(Boolean);
    return { ...result, modules: [...esm, ...result.commonJs] };
  }

  it('a service that sends samples to a stream loads no better-sqlite3 (and the control: one that records to SQLite does)', async () => {
    const sink = await loadsOf('sink');
    expect(sink.written).toBe(20);
    expect(sink.sharedObjects.filter((o) => o.includes('better_sqlite3'))).toEqual([]);
    expect(sink.modules.filter((m) => m.includes('better-sqlite3'))).toEqual([]);

    const sqlite = await loadsOf('sqlite');
    expect(sqlite.written).toBe(20);
    expect(sqlite.sharedObjects.filter((o) => o.includes('better_sqlite3')).length).toBeGreaterThan(0);
  });

  it('a service that records to SQLite loads no vega, vega-lite or commander', async () => {
    const { modules } = await loadsOf('sqlite');
    // Control: the tracker sees modules, ours and the client's.
    expect(modules.some((m) => m.endsWith('/src/lock/redis-lock.js'))).toBe(true);
    expect(modules.some((m) => m.includes('/node_modules/ioredis/'))).toBe(true);
    expect(modules.filter((m) => /\/node_modules\/(vega|vega-lite|commander)\//.test(m))).toEqual([]);
  });

  it('a service that does not use the OpenTelemetry recorder loads no @opentelemetry/api (and the control: one that does)', async () => {
    const sqlite = await loadsOf('sqlite');
    expect(sqlite.modules.filter((m) => m.includes('@opentelemetry'))).toEqual([]);
    const otel = await loadsOf('otel');
    expect(otel.written).toBe(20);
    expect(otel.modules.some((m) => m.includes('/node_modules/@opentelemetry/api/'))).toBe(true);
  });
});
