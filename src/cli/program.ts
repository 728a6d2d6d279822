import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Builds the commander program. Commands are added here as they arrive. */
export function buildProgram(): Command {
  return new Command('ttl-advisor')
    .description('Measure how long Redis locks are really held, and recommend TTL = max(3 s, 3 × p99) per key pattern.')
    .version(packageJson.version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)');
}

/** Runs the CLI and returns the exit code: 0 fine, 1 findings that need action, 2 usage or input error. */
export async function run(argv: readonly string[]): Promise<number> {
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync(argv as string[]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0; commander has already printed.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`ttl-advisor: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
}
