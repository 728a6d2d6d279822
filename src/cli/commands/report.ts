import { InvalidArgumentError, Option, type Command } from 'commander';
import { ConfigError } from '../../errors.js';
import { findingText } from '../../report/decision-text.js';
import { nothingMatchedText, warningSentences } from '../../report/hint-text.js';
import { printable } from '../../text.js';
import { REPORT_FORMATS, type ReportFormat } from '../../report/index.js';
import { writeReports } from '../../report/write-reports.js';
import { addAnalysisOptions, runAnalysis, type AnalysisOptions } from '../args.js';
import type { Io } from '../io.js';
import { renderTable } from '../output/table.js';

interface ReportOptions extends AnalysisOptions {
  out: string;
  format: ReportFormat[];
  quiet?: boolean;
}

function formatList(value: string): ReportFormat[] {
  const formats = value.split(',').map((f) => f.trim().toLowerCase()).filter(Boolean);
  const unknown = formats.filter((f) => !REPORT_FORMATS.includes(f as ReportFormat));
  if (formats.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(`Expected a comma-separated list of ${REPORT_FORMATS.join(', ')}.`);
  }
  return [...new Set(formats)] as ReportFormat[];
}

/** `ttl-advisor report`: p99 per pattern, recommendations, and the report files. */
export function registerReport(program: Command, io: Io): void {
  addAnalysisOptions(
    program
      .command('report')
      .description('Analyse recorded samples: p99 per key pattern, TTL recommendations, and HTML / Markdown / JSON reports.'),
  )
    .option('--out <dir>', 'directory to write the reports into', 'reports')
    .addOption(new Option('--format <list>', `formats to write: ${REPORT_FORMATS.join(',')}`).argParser(formatList).default(REPORT_FORMATS, REPORT_FORMATS.join(',')))
    .option('-q, --quiet', 'print nothing but errors')
    .action(async (options: ReportOptions) => {
      const progress = (line: string) => io.isTty && !options.quiet && io.stderr(`\r\u001b[2K${line}`);
      progress('reading samples…');
      const analysis = await runAnalysis(options, io);
      if (analysis.held && analysis.held.samples > 0) {
        // The window or the patterns missed the data: earlier reports stay as they are.
        progress('');
        throw new ConfigError(nothingMatchedText(analysis.held));
      }
      progress(`rendering ${options.format.join(', ')} for ${analysis.patterns.length} pattern(s)…`);
      const written = await writeReports(analysis, options.format, options.out);
      progress('');
      if (options.quiet) return;
      for (const warning of warningSentences(analysis)) io.stderr(`warning: ${warning}\n`);
      io.stdout(renderTable(analysis));
      // Read from histogram buckets (Prometheus): how finely they resolve each p99, or why there is no advice.
      const resolution = analysis.patterns.flatMap((p) => p.decision.findings.filter((f) => f.kind === 'resolution' || f.kind === 'beyond-buckets').map((f) => `${printable(p.pattern)}: ${findingText(f)}\n`));
      if (resolution.length > 0) io.stdout(`\n${resolution.join('')}`);
      io.stdout(`\nwrote ${written.join(', ')}\n`);
    });
}
