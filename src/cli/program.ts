import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { TtlAdvisorError } from '../errors.js';
import { registerApply } from './commands/apply.js';
import { registerCheck } from './commands/check.js';
import { registerCollect } from './commands/collect.js';
import { registerInit } from './commands/init.js';
import { registerLocks } from './commands/locks.js';
import { registerMerge } from './commands/merge.js';
import { registerPrune } from './commands/prune.js';
import { registerReport } from './commands/report.js';
import { registerStats } from './commands/stats.js';
import { registerWatch } from './commands/watch.js';
import { processIo, type Io, type RunState } from './io.js';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Builds the commander program: one command per file under `commands/`, in the order `--help` lists them. */
export function buildProgram(io: Io = processIo, state: RunState = { exitCode: 0 }): Command {
  const program = new Command('ttl-advisor')
    .description('Measure how long Redis locks are really held, and recommend TTL = max(3 s, 3 × p99) per key pattern.')
    .version(packageJson.version, '-V, --version')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showSuggestionAfterError(true);
  registerReport(program, io);
  registerCheck(program, io, state);
  registerApply(program, io);
  registerInit(program, io);
  registerStats(program, io);
  registerLocks(program, io);
  registerCollect(program, io);
  registerWatch(program, io);
  registerMerge(program, io);
  registerPrune(program, io);
  return program;
}

/** Runs the CLI and returns the exit code: 0 fine, 1 findings that need action, 2 usage or input error. */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  const state: RunState = { exitCode: 0 };
  const program = buildProgram(io, state).exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv as string[]);
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0; commander has already printed its one line.
      return error.exitCode === 0 ? 0 : 2;
    }
    // One line, whatever the message: a usage or input error is one clear line.
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
    io.stderr(`ttl-advisor: ${error instanceof TtlAdvisorError ? message : `unexpected error: ${message}`}\n`);
    return 2;
  }
}
