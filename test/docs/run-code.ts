import { createRequire } from 'node:module';
import { isAbsolute, join } from 'node:path';
import ts from 'typescript';
import * as pkg from '../../src/index.js';
import * as service from '../../src/service.js';

/**
 * Runs the docs' TypeScript and JavaScript blocks in this process, against the
 * package's source and a real Redis: each block is transpiled to CommonJS and
 * run as the body of an async function whose `require` hands out the modules.
 * `ttl-advisor`, `ioredis` and `redis` come through thin wrappers that note
 * every client, recorder and shutdown handler a block creates, so that the
 * page's cleanup can close them; a recorder's relative path is put in the
 * page's scratch folder, so no block writes into the demo database.
 */

const requireHere = createRequire(import.meta.url);
/** Closes one thing a block made; returns a problem to report, if closing found one. */
type Closer = () => unknown;

/** What a block created, closed in order: instrumentation, recorders, clients. */
export class Resources {
  private readonly closers: Closer[][] = [[], [], []];

  constructor(readonly scratchDir: string) {}

  add(stage: 0 | 1 | 2, close: Closer): void {
    this.closers[stage]!.push(close);
  }

  /** Closes everything; returns the problems found (a recorder that lost samples), which are the block's. */
  async closeAll(): Promise<string[]> {
    const problems: string[] = [];
    for (const stage of this.closers) {
      for (const close of stage.splice(0)) {
        try {
          const problem = await close();
          if (typeof problem === 'string') problems.push(problem);
        } catch (error) {
          problems.push(`closing what the block opened failed: ${(error as Error).message}`);
        }
      }
    }
    return problems;
  }
}

/** A recorder's close: what it lost is the example's failure, since recording is what the docs promise. */
async function closeRecorder(what: string, recorder: { close(): Promise<pkg.RecorderStats> }): Promise<string | undefined> {
  const stats = await recorder.close();
  return stats.dropped > 0 || stats.pending > 0 ? `${what} lost samples: ${JSON.stringify(stats)}` : undefined;
}

function trackedClass<T extends abstract new (...args: never[]) => object>(cls: T, onNew: (instance: InstanceType<T>, args: unknown[]) => void, mapArgs = (args: unknown[]) => args): T {
  return new Proxy(cls, {
    construct(target, args, newTarget) {
      const instance = Reflect.construct(target, mapArgs(args), newTarget) as InstanceType<T>;
      onNew(instance, args);
      return instance;
    },
  });
}

/**
 * The modules a block's `require` hands out, for one page. Instrumentation
 * with one of `sharedRecorders` is left open: closing it would take the
 * wrapper off every client instrumented with that recorder, the
 * application's `redis` included.
 */
export async function moduleTable(resources: Resources, sharedRecorders: readonly object[] = []): Promise<Map<string, unknown>> {
  const ioredis = await import('ioredis');
  const nodeRedis = await import('redis');

  const Redis = trackedClass(ioredis.Redis, (client) => resources.add(2, () => client.disconnect()));
  const Cluster = trackedClass(ioredis.Cluster, (client) => resources.add(2, () => client.disconnect()));
  const createClient = ((...args: Parameters<typeof nodeRedis.createClient>) => {
    const client = nodeRedis.createClient(...args);
    resources.add(2, () => (client.isOpen ? client.destroy() : undefined));
    return client;
  }) as typeof nodeRedis.createClient;

  const inScratch = (args: unknown[]) => {
    const [options, ...rest] = args as [pkg.SqliteRecorderOptions, ...unknown[]];
    const path = options && typeof options.path === 'string' && !isAbsolute(options.path) ? join(resources.scratchDir, options.path) : options?.path;
    return [{ ...options, path }, ...rest];
  };
  const SqliteRecorder = trackedClass(pkg.SqliteRecorder, (recorder) => resources.add(1, () => closeRecorder(`the SqliteRecorder at ${recorder.path}`, recorder)), inScratch);
  const RedisStreamSink = trackedClass(pkg.RedisStreamSink, (sink) => resources.add(1, () => closeRecorder('a RedisStreamSink', sink)));
  const flushOnShutdown: typeof pkg.flushOnShutdown = (recorder, options) => {
    const remove = pkg.flushOnShutdown(recorder, options);
    resources.add(1, remove);
    return remove;
  };
  const instrument: typeof pkg.instrument = (client, options) => {
    const instrumented = pkg.instrument(client, options);
    if (!sharedRecorders.includes(options.recorder)) resources.add(0, () => pkg.instrumentationOf(instrumented)?.close());
    return instrumented;
  };
  const overrides = { SqliteRecorder, RedisStreamSink, flushOnShutdown, instrument };

  return new Map<string, unknown>([
    ['ttl-advisor', { ...pkg, ...overrides }],
    ['ttl-advisor/service', { ...service, ...overrides }],
    ['ioredis', { ...ioredis, Redis, Cluster, default: Redis }],
    ['redis', { ...nodeRedis, createClient }],
  ]);
}

/** The names a block may use without defining them (see APPLICATION in typecheck.ts), with their values. */
export type Application = Record<'app' | 'redis' | 'recorder' | 'createOrder' | 'work' | 'db' | 'id' | 'key', unknown>;

export interface RunOptions {
  lang: string;
  text: string;
  commonJs: boolean;
  modules: Map<string, unknown>;
  application: Application;
  /** `modules=from:to` of the marker. */
  aliases: Record<string, string>;
}

/**
 * A statement whose comment shows its value, `expr; // → 'value'`, becomes a
 * check that it has that value (a JavaScript literal), on the same line.
 */
export function withValueChecks(text: string): string {
  return text
    .split('\n')
    .map((line, i) => {
      const m = /^(\s*)([^/].*?);\s*\/\/ → (.+?)\s*$/.exec(line);
      return m ? `${m[1]}__docsValue(${i + 1}, (${m[2]}), ${JSON.stringify(m[3])});` : line;
    })
    .join('\n');
}

function checkValue(line: number, actual: unknown, literal: string): void {
  const expected: unknown = new Function(`return (${literal});`)();
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`line ${line} of the block says → ${literal}, but the value is ${JSON.stringify(actual)}`);
  }
}

/** Runs one block to its end (top-level awaits included). */
export async function runCode({ lang, text, commonJs, modules, application, aliases }: RunOptions): Promise<void> {
  const typescript = lang === 'ts' || lang === 'typescript';
  const checked = withValueChecks(text);
  // CommonJS runs as written: the function around it is async already.
  const js = commonJs
    ? checked
    : ts.transpileModule(checked, {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, experimentalDecorators: true },
        fileName: typescript ? 'block.ts' : 'block.js',
      }).outputText;

  const loaded = new Map<string, unknown>();
  for (const match of js.matchAll(/\brequire\((['"])([^'"]+)\1\)/g)) {
    const written = match[2]!;
    const name = aliases[written] ?? written;
    if (loaded.has(written)) continue;
    const known = modules.get(name);
    // Our wrappers are ES modules seen from CommonJS; any other module is what Node's require gives.
    loaded.set(written, known ? { __esModule: true, ...(known as object) } : requireHere(name));
  }
  const blockRequire = (name: string): unknown => {
    if (!loaded.has(name)) throw new Error(`the block requires ${name}, which the harness did not load`);
    return loaded.get(name);
  };
  const names = Object.keys(application);
  const body = `return (async () => {\n${js}\n})();`;
  const fn = new Function('require', 'exports', 'module', '__docsValue', ...names, body) as (...args: unknown[]) => Promise<void>;
  const mod = { exports: {} };
  await fn(blockRequire, mod.exports, mod, checkValue, ...names.map((n) => application[n as keyof Application]));
}
