import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT, type CodeBlock } from './markdown.js';

/**
 * Type-checks the docs' TypeScript and JavaScript blocks in one compiler run,
 * against the package's own source (`ttl-advisor` and `ttl-advisor/service`
 * map to src/), with the strictness of the project's tsconfig. Blocks live in
 * memory under test/docs/.blocks/, so their imports of ioredis, redis, redlock
 * or redis-semaphore resolve from the repository's node_modules.
 */

/** What a snippet may use without defining it: the application around it. */
const APPLICATION = `import type { Redis } from 'ioredis';
import type { SqliteRecorder } from 'ttl-advisor';

interface DocsRequest {
  body: any;
}
interface DocsResponse {
  status(code: number): DocsResponse;
  json(body: unknown): DocsResponse;
  set(field: string, value: string): DocsResponse;
  end(): DocsResponse;
}

declare global {
  /** An Express-like app. */
  const app: { post(path: string, handler: (req: DocsRequest, res: DocsResponse) => unknown): void };
  /** The service's ioredis client. */
  const redis: Redis;
  /** The service's recorder. */
  const recorder: SqliteRecorder;
  /** The critical section's work. */
  function createOrder(...args: unknown[]): Promise<{ id: string }>;
  function work(): Promise<void>;
  /** A SQL store with fencing. */
  const db: { query(sql: string, params: readonly unknown[]): Promise<unknown> };
  const id: string;
  const key: string;
}
`;

/** Frameworks the repository does not install, declared as far as the docs use them. */
const FRAMEWORKS = `declare module '@nestjs/common' {
  export function Module(metadata: { imports?: unknown[]; providers?: unknown[]; exports?: unknown[] }): ClassDecorator;
}
`;

const BLOCKS_DIR = join(ROOT, 'test/docs/.blocks');

export interface BlockSource {
  block: CodeBlock;
  /** The text to check: the block, with module names mapped (`modules=`). */
  text: string;
  /** Whether it is CommonJS (a `js` block that uses require). */
  commonJs: boolean;
}

/** The block's file name inside the in-memory folder. */
function fileNameOf(source: BlockSource, n: number): string {
  const base = `${source.block.file.replace(/[/.]/g, '_')}_L${source.block.line}_${n}`;
  const ext = source.block.lang === 'ts' || source.block.lang === 'typescript' ? '.ts' : source.commonJs ? '.cjs' : '.mjs';
  return join(BLOCKS_DIR, base + ext);
}

/**
 * Wraps a CommonJS snippet in an async function on its first line (so line
 * numbers stay), as whoever pastes it does: top-level await is no CommonJS.
 */
export function asRunnableCommonJs(text: string): string {
  return `(async () => { ${text}\n})();`;
}

/** Type errors per block (empty when it checks), formatted with the page's line numbers. */
export function typecheckBlocks(sources: readonly BlockSource[]): Map<CodeBlock, string[]> {
  const base = ts.parseJsonConfigFileContent(ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, ROOT).options;
  const options: ts.CompilerOptions = {
    ...base,
    noEmit: true,
    declaration: false,
    sourceMap: false,
    rootDir: ROOT,
    // A snippet names things to show them; they need not all be used.
    noUnusedLocals: false,
    noUnusedParameters: false,
    allowJs: true,
    checkJs: true,
    experimentalDecorators: true,
    moduleDetection: ts.ModuleDetectionKind.Force,
    baseUrl: ROOT,
    paths: { 'ttl-advisor': ['src/index.ts'], 'ttl-advisor/service': ['src/service.ts'] },
  };
  const virtual = new Map<string, string>();
  const fileOf = new Map<string, BlockSource>();
  sources.forEach((source, n) => {
    const name = fileNameOf(source, n);
    virtual.set(name, source.commonJs ? asRunnableCommonJs(source.text) : source.text);
    fileOf.set(name, source);
  });
  const application = join(BLOCKS_DIR, 'application.d.ts');
  const frameworks = join(BLOCKS_DIR, 'frameworks.d.ts');
  virtual.set(application, APPLICATION);
  virtual.set(frameworks, FRAMEWORKS);

  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    const text = virtual.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, languageVersion, true) : getSourceFile(name, languageVersion, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => virtual.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => virtual.get(name) ?? readFile(name);

  // The declarations the tests keep for peers whose own types NodeNext cannot see (node-redlock 5, node-redlock 4).
  const peerTypes = readdirSync(join(ROOT, 'test/types')).filter((n) => n.endsWith('.d.ts')).map((n) => join(ROOT, 'test/types', n));
  const program = ts.createProgram({ rootNames: [...virtual.keys(), ...peerTypes], options, host });
  const result = new Map<CodeBlock, string[]>(sources.map((s) => [s.block, []]));
  const stray: string[] = [];
  const format = (d: ts.Diagnostic): string => ts.flattenDiagnosticMessageText(d.messageText, '\n');
  for (const d of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) stray.push(format(d));
  for (const name of virtual.keys()) {
    const file = program.getSourceFile(name);
    if (!file) continue;
    const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    const source = fileOf.get(name);
    for (const d of diagnostics) {
      const line = d.start === undefined ? 0 : file.getLineAndCharacterOfPosition(d.start).line;
      if (!source) stray.push(`${name}:${line + 1}: ${format(d)}`);
      else result.get(source.block)!.push(`${source.block.file}:${source.block.line + 1 + line}: TS${d.code}: ${format(d)}`);
    }
  }
  if (stray.length > 0) throw new Error(`the docs' type declarations do not check:\n${stray.join('\n')}`);
  return result;
}
