import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { TtlAdvisorError } from '../../errors.js';
import { applyRecommendations, DEFAULT_APPLY_MIN_WINDOW_MS } from '../../policy/apply.js';
import { DEFAULT_POLICY_PATH, formatPolicy, parsePolicy, TtlPolicy } from '../../policy/policy.js';
import { printable } from '../../text.js';
import { formatMs } from '../../units.js';
import { addAnalysisOptions, minWindowOption, runAnalysis, type AnalysisOptions } from '../args.js';
import { writeFileAtomic, type Io } from '../io.js';

interface InitCommandOptions extends AnalysisOptions {
  policy: string;
  minWindow: number;
}

/** `ttl-advisor init`: the first policy file, from the data. */
export function registerInit(program: Command, io: Io): void {
  addAnalysisOptions(
    program
      .command('init')
      .description('Write a new TTL policy file from the data: one entry per pattern with enough evidence, the others listed with the reason.'),
  )
    .option('--policy <file>', 'the TTL policy file to create', DEFAULT_POLICY_PATH)
    .addOption(minWindowOption('leave out patterns whose data spans less than this', DEFAULT_APPLY_MIN_WINDOW_MS))
    .action((options: InitCommandOptions) => {
      if (existsSync(options.policy)) {
        throw new TtlAdvisorError(`${options.policy} exists already; ttl-advisor apply updates it`);
      }
      const analysis = runAnalysis(options, io);
      // The same evidence rules as apply, against an empty policy: every pattern is new.
      const { document, changes, skipped } = applyRecommendations(analysis, new TtlPolicy({ locks: {} }), {
        minChangePercent: 0,
        minWindowMs: options.minWindow,
      });
      const text = formatPolicy(document);
      parsePolicy(text, options.policy);
      writeFileAtomic(options.policy, text);
      io.stdout(`wrote ${options.policy}: ${changes.length} pattern(s)\n`);
      for (const c of changes) io.stdout(`  ${printable(c.pattern)}: ${formatMs(c.toMs)}\n`);
      if (skipped.length > 0) io.stdout(`left out ${skipped.length} pattern(s), for now:\n`);
      for (const s of skipped) io.stdout(`  ${printable(s.pattern)} (${formatMs(s.toMs)} recommended): ${s.detail}\n`);
    });
}
