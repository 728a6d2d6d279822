import { Option, type Command } from 'commander';
import { TOO_LONG_FACTOR } from '../../analyze/recommend.js';
import { checkPolicy } from '../../policy/check.js';
import { DEFAULT_POLICY_PATH, loadTtlPolicy } from '../../policy/policy.js';
import { readFileSync } from 'node:fs';
import { renderCheckJson, renderCheckMarkdown } from '../../report/check.js';
import { renderCheckGithub } from '../../report/github.js';
import { DEFAULT_APPLY_MIN_CHANGE_PERCENT, DEFAULT_APPLY_MIN_WINDOW_MS } from '../../policy/apply.js';
import { addAnalysisOptions, decisionOptionsOf, minWindowOption, nonNegativeNumber, runAnalysis, type AnalysisOptions, type DecisionFlags } from '../args.js';
import { runCheckCode } from '../code.js';
import { writeCheckOutput, type Io, type RunState } from '../io.js';

interface CheckCommandOptions extends AnalysisOptions, DecisionFlags {
  policy: string;
  format: 'md' | 'json' | 'github';
  code?: string[] | boolean;
}

/** `ttl-advisor check`: the policy file against the data, for a PR; exit 1 when a TTL must rise or a lock expired. */
export function registerCheck(program: Command, io: Io, state: RunState): void {
  addAnalysisOptions(
    program
      .command('check')
      .description('Compare the TTLs in a policy file with the data; Markdown for a PR comment. Exit 1 only where apply would change a TTL, or a human must decide (pinned, too little data) and locks expired.'),
  )
    .option('--policy <file>', 'the TTL policy file', DEFAULT_POLICY_PATH)
    .addOption(
      new Option('--format <format>', 'md, json, or github: annotations on the policy file and the Markdown to $GITHUB_STEP_SUMMARY')
        .choices(['md', 'json', 'github'])
        .default('md'),
    )
    .option('--strict', `also fail on TTLs more than ${TOO_LONG_FACTOR}× the recommendation`)
    .option('--fail-on-insufficient-data', 'fail when a configured pattern has too few samples for a p99')
    // The same evidence rules as apply, so that check fails only on what apply would change.
    .option('--min-change <percent>', 'moves smaller than this neither fail nor warn, unless locks expired (as in apply)', nonNegativeNumber('--min-change'), DEFAULT_APPLY_MIN_CHANGE_PERCENT)
    .addOption(minWindowOption('a TTL moves only on data spanning at least this (as in apply)', DEFAULT_APPLY_MIN_WINDOW_MS))
    .option('--code [glob...]', 'check the lock TTLs in TypeScript/JavaScript source instead (default: the git-tracked files); see docs/code.md')
    .action(async (options: CheckCommandOptions) => {
      if (options.code !== undefined) return runCheckCode({ ...options, code: options.code }, io, state);
      const policy = loadTtlPolicy(options.policy);
      const analysis = await runAnalysis(options, io);
      const result = checkPolicy(analysis, policy, decisionOptionsOf(options));
      writeCheckOutput(io, options.format, {
        github: () => renderCheckGithub(result, analysis, { path: options.policy, text: readFileSync(options.policy, 'utf8') }),
        json: () => renderCheckJson(result, analysis),
        md: () => renderCheckMarkdown(result, analysis),
      });
      state.exitCode = result.exitCode;
    });
}
