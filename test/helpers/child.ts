import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

/** A child process with its output gathered (stdout and stderr together) and its exit awaited. */
export interface Child {
  proc: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when the output contains `text`. */
  said(text: string | RegExp, timeoutMs?: number): Promise<void>;
}

export function startChild(command: string, args: string[], running?: ChildProcess[], cwd?: string): Child {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(cwd !== undefined && { cwd }) });
  running?.push(proc);
  let output = '';
  const waiters: (() => void)[] = [];
  const onData = (c: Buffer) => {
    output += c.toString();
    for (const w of waiters.splice(0)) w();
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  const said = async (text: string | RegExp, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    const has = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
    while (!has()) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`no ${String(text)} in: ${output}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { proc, output: () => output, exited, said };
}

/** Whether Debian's Python has the `redis` client (python3-redis), for the tests that run the seed's Python lock. */
export const hasPythonRedis: boolean = (() => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import redis'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** What a CLI child measured of itself (see measured-cli.ts), and its output without that line. */
export interface MeasuredRun {
  code: number | null;
  stdout: string;
  stderr: string;
  maxRssMiB: number;
  cpuMs: number;
  wallMs: number;
}

/** Runs `ttl-advisor <args>` in a child (from the transpiled copy), in `cwd`, and reads its peak memory and CPU. */
export async function runMeasuredCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<MeasuredRun> {
  const { built } = await import('./built.js');
  const started = performance.now();
  const proc = spawn(process.execPath, [built('test/helpers/measured-cli.ts'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd !== undefined && { cwd: options.cwd }),
    env: { ...process.env, ...options.env },
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => void (stdout += c.toString()));
  proc.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((resolve) => proc.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  const measured = /\nmeasured: maxRssKiB=(\d+) cpuMs=(\d+)\n$/.exec(stderr);
  return {
    code,
    stdout,
    stderr: measured ? stderr.slice(0, measured.index) : stderr,
    maxRssMiB: measured ? Number(measured[1]) / 1024 : Number.NaN,
    cpuMs: measured ? Number(measured[2]) : Number.NaN,
    wallMs: performance.now() - started,
  };
}
