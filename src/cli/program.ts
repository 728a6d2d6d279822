import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { DEFAULT_RECOMMENDATION_POLICY as RULE } from '../analyze/recommend.js';
import { TtlAdvisorError } from '../errors.js';
import { formatMs } from '../units.js';
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
    .description(`Measure how long Redis locks are really held, and recommend TTL = max(${formatMs(RULE.floorMs)}, ${RULE.multiplier} × p99) per key pattern.`)
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
  const program = buildProgram(io, state);
  // No arguments: a few lines on what to type, not the whole help; a usage error like any other.
  if (argv.length <= 2) {
    io.stderr(shortUsage(program));
    return 2;
  }
  // Commander's own error lines are replaced by one line of ours, below; the command that failed says which help to point at.
  let failed: Command = program;
  for (const command of [program, ...program.commands]) {
    command.configureOutput({ outputError: () => undefined }).exitOverride((error) => {
      failed = command;
      throw error;
    });
  }
  try {
    await program.parseAsync(argv as string[]);
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0, their output written.
      if (error.exitCode === 0) return 0;
      io.stderr(`${usageErrorLine(error, failed)}\n`);
      return 2;
    }
    // One line, whatever the message: a usage or input error is one clear line.
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
    io.stderr(`ttl-advisor: ${error instanceof TtlAdvisorError ? message : `unexpected error: ${message}`}\n`);
    return 2;
  }
}

/**
 * A commander usage error in one line, with commander's suggestion kept and the
 * help to read: `ttl-advisor: unknown option '--x' (see ttl-advisor locks --help)`.
 */
function usageErrorLine(error: CommanderError, command: Command): string {
  const [first = '', ...rest] = error.message.replace(/^error:\s*/, '').split(/\s*\n\s*/).filter(Boolean);
  // "(Did you mean --match?)" on a line of its own
  const suggestion = rest.join(' ').replace(/^\((.*)\)$/, '$1').replace(/^Did/, 'did');
  const help = command.parent ? `ttl-advisor ${command.name()} --help` : 'ttl-advisor --help';
  return `ttl-advisor: ${first}${suggestion ? `; ${suggestion}` : ''} (see ${help})`;
}

/** What `ttl-advisor` alone prints: the commands, and where to read on. */
function shortUsage(program: Command): string {
  const commands = program.commands.map((command) => command.name()).join(', ');
  return [
    'Usage: ttl-advisor <command> [options]',
    `Commands: ${commands}`,
    'ttl-advisor --help says what each command does, ttl-advisor <command> --help lists its options; the README has the rest.',
    '',
  ].join('\n');
}
