import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { applyRecommendations, DEFAULT_APPLY_MIN_CHANGE_PERCENT, DEFAULT_APPLY_MIN_WINDOW_MS } from '../../policy/apply.js';
import { unifiedDiff } from '../../policy/diff.js';
import { DEFAULT_POLICY_PATH, formatPolicy, loadTtlPolicy, parsePolicy } from '../../policy/policy.js';
import { renderApplyLines } from '../../report/apply.js';
import { warningSentences } from '../../report/hint-text.js';
import { addAnalysisOptions, decisionOptionsOf, minWindowOption, nonNegativeNumber, runAnalysis, type AnalysisOptions, type DecisionFlags } from '../args.js';
import { runApplyCode } from '../code.js';
import { writeApplied, type Io } from '../io.js';

interface ApplyCommandOptions extends AnalysisOptions, DecisionFlags {
  policy: string;
  dryRun?: boolean;
  code?: string[] | boolean;
}

/** `ttl-advisor apply`: writes the recommendations into the policy file and prints the diff. */
export function registerApply(program: Command, io: Io): void {
  addAnalysisOptions(
    program
      .command('apply')
      .description('Write the recommended TTLs into the policy file (pinned entries untouched) and print the diff.'),
  )
    .option('--policy <file>', 'the TTL policy file', DEFAULT_POLICY_PATH)
    .option('--dry-run', 'print the diff without writing')
    .addOption(minWindowOption('move no TTL on a pattern whose data spans less than this', DEFAULT_APPLY_MIN_WINDOW_MS))
    .option('--min-change <percent>', 'leave TTLs alone whose recommendation differs by less than this', nonNegativeNumber('--min-change'), DEFAULT_APPLY_MIN_CHANGE_PERCENT)
    .option('--code [glob...]', 'edit the lock TTLs in TypeScript/JavaScript source instead (default: the git-tracked files); see docs/code.md')
    .action(async (options: ApplyCommandOptions) => {
      if (options.code !== undefined) return runApplyCode({ ...options, code: options.code }, io);
      const policy = loadTtlPolicy(options.policy);
      const before = readFileSync(options.policy, 'utf8');
      const analysis = await runAnalysis(options, io);
      for (const warning of warningSentences(analysis)) io.stderr(`warning: ${warning}\n`);
      const applied = applyRecommendations(analysis, policy, decisionOptionsOf(options));
      const lines = renderApplyLines(options.policy, applied, analysis.unconfirmed);
      if (applied.changes.length === 0) return void io.stdout(lines);
      const after = formatPolicy(applied.document);
      // What is written must load: checked against the same rules as any policy file.
      parsePolicy(after, options.policy);
      // Named from the working directory (a repository's root, in CI), so `git apply` takes the diff as printed.
      const relativeName = relative(process.cwd(), resolve(options.policy));
      io.stdout(unifiedDiff(before, after, relativeName.startsWith('..') || isAbsolute(relativeName) ? options.policy : relativeName));
      io.stdout(lines);
      writeApplied(io, options.dryRun, new Map([[options.policy, after]]), (path) => path);
    });
}
