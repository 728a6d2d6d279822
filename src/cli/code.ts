import { existsSync } from 'node:fs';
import { codeEdits, checkCode, type CodeCheckResult } from '../code/decide.js';
import { planLiteralEdits, writePlannedFiles } from '../code/edit.js';
import { listCodeFiles, repositoryRoot } from '../code/files.js';
import { loadTypeScript } from '../code/load.js';
import { scanCode } from '../code/scan.js';
import type { Analysis } from '../analyze/analyze.js';
import { unifiedDiff } from '../policy/diff.js';
import { loadTtlPolicy } from '../policy/policy.js';
import { renderCodeApplyLines } from '../report/apply.js';
import { renderCodeCheckJson, renderCodeCheckMarkdown } from '../report/code.js';
import { renderCodeCheckGithub } from '../report/code-github.js';
import { warningSentences } from '../report/hint-text.js';
import { decisionOptionsOf, runAnalysis, type AnalysisOptions, type DecisionFlags } from './args.js';
import { writeCheckOutput, writeFileAtomic, type Io, type RunState } from './io.js';
import { printable } from '../text.js';

/** The options `check --code` and `apply --code` read (the commands' own, plus `--code`). */
export interface CodeCliOptions extends AnalysisOptions, DecisionFlags {
  /** `--code` with globs, or `true` alone: the git-tracked source files. */
  code: string[] | boolean;
  policy: string;
  format?: 'md' | 'json' | 'github';
  dryRun?: boolean;
}

async function judge(command: 'check' | 'apply', options: CodeCliOptions, io: Io): Promise<{ result: CodeCheckResult; analysis: Analysis; root: string }> {
  const ts = await loadTypeScript(command);
  const cwd = process.cwd();
  const files = listCodeFiles(Array.isArray(options.code) ? options.code : [], cwd);
  const root = repositoryRoot(files, cwd);
  const scan = scanCode(ts, files, root);
  // The policy wins where it has an entry for a site's pattern; without a policy file, the code alone.
  const policy = existsSync(options.policy) ? loadTtlPolicy(options.policy) : undefined;
  const analysis = await runAnalysis(options, io);
  const result = checkCode(scan, analysis, policy, decisionOptionsOf(options));
  return { result, analysis, root };
}

/** `check --code`: the lock TTLs in the source against the data; exit 1 where `apply --code` would raise one, or locks expired. */
export async function runCheckCode(options: CodeCliOptions, io: Io, state: RunState): Promise<void> {
  const { result, analysis } = await judge('check', options, io);
  writeCheckOutput(io, options.format, {
    github: () => renderCodeCheckGithub(result, analysis),
    json: () => renderCodeCheckJson(result),
    md: () => renderCodeCheckMarkdown(result, analysis),
  });
  state.exitCode = result.exitCode;
}

/** `apply --code`: edits the TTL literals the decision moves, prints the diff (`git apply` takes it), and lists what it leaves. */
export async function runApplyCode(options: CodeCliOptions, io: Io): Promise<void> {
  const { result, analysis, root } = await judge('apply', options, io);
  for (const warning of warningSentences(analysis)) io.stderr(`warning: ${warning}\n`);
  const edits = codeEdits(result);
  const lines = renderCodeApplyLines(result, edits);
  if (edits.length === 0) return void io.stdout(lines);
  const files = planLiteralEdits(edits, root);
  // Paths from the repository's root, so `git apply` takes the diff as printed.
  for (const f of files) io.stdout(unifiedDiff(f.before, f.after, f.name));
  io.stdout(lines);
  if (options.dryRun) return void io.stdout('(dry run: nothing written)\n');
  writePlannedFiles(files, writeFileAtomic);
  io.stdout(`wrote ${files.map((f) => printable(f.name)).join(', ')}\n`);
}
