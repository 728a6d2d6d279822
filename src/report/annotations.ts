import { formatCount } from '../units.js';

/** GitHub shows at most this many annotations per step usefully; the rest are counted in the summary. */
export const MAX_ANNOTATIONS = 10;

/** A finding on a line of a file, as GitHub shows it beside the diff. */
export interface Annotation {
  /** `error` for what fails the check, `warning` for the rest. */
  level: 'error' | 'warning';
  /** The file and 1-based line it is shown on; `undefined` for a finding of no one line (shown on the run). */
  file: string | undefined;
  line: number | undefined;
  title: string;
  message: string;
}

/** What `--format github` gives: workflow commands for stdout, and the Markdown for `$GITHUB_STEP_SUMMARY`. */
export interface GithubOutput {
  annotations: string;
  summary: string;
}

/**
 * The workflow commands of a check — errors first, then in the order given
 * (the report's, worst first), at most {@link MAX_ANNOTATIONS} — then its
 * headline as a plain line; and its Markdown summary ending with how many
 * findings had no annotation of their own (the step summary works for pull
 * requests from forks, where a token cannot comment).
 */
export function renderGithub(annotations: readonly Annotation[], headline: string, summary: string): GithubOutput {
  const ordered = [...annotations.filter((a) => a.level === 'error'), ...annotations.filter((a) => a.level === 'warning')];
  const shown = ordered.slice(0, MAX_ANNOTATIONS);
  const where = (a: Annotation) => (a.file === undefined ? '' : `file=${property(a.file)},line=${a.line ?? 1},`);
  const commands = shown.map((a) => `::${a.level} ${where(a)}title=${property(a.title)}::${data(a.message)}\n`).join('');
  const more = ordered.length - shown.length;
  return {
    annotations: `${commands}${headline}\n`,
    summary: summary + (more > 0 ? `\n${formatCount(more)} more finding(s) without an annotation of their own: see the table above.\n` : ''),
  };
}

/** Workflow-command escaping: the message part. */
function data(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Workflow-command escaping: a property value (`:` and `,` separate properties). */
function property(text: string): string {
  return data(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
