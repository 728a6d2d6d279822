/**
 * Just enough of the shell to run the commands the docs show: words with
 * single and double quotes, `NAME=value` before the command, a trailing
 * `# comment`, and `\` line continuations. Anything else (pipes, redirects,
 * `$` expansions) is refused, or — for commands taken out of a workflow's
 * `run:` — cut off where it starts.
 */

import { readFileSync } from 'node:fs';

/** This package's version, which a command may pin (`npx ttl-advisor@0.1.0 …`). */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface ShellCommand {
  /** 1-based line in the block where the command starts. */
  line: number;
  /** The command as written, for messages. */
  source: string;
  env: Record<string, string>;
  /** The words after the environment assignments. */
  argv: string[];
  /** The trailing comment, without `#`. */
  comment: string | undefined;
}

const OPERATORS = ['||', '&&', '|', '>', '<', ';', '&'];

/**
 * Splits one command line into words. With `cutAtOperator`, words end at the
 * first unquoted shell operator; otherwise an operator is an error.
 */
export function splitWords(text: string, cutAtOperator = false): { words: string[]; comment: string | undefined } {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  const push = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      push();
      i++;
    } else if (c === '#' && word === undefined) {
      return { words, comment: text.slice(i + 1).trim() };
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${text}`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '$') throw new Error(`$ expansions are not supported: ${text}`);
        if (text[j] === '\\' && j + 1 < text.length && '"\\$`'.includes(text[j + 1]!)) j++;
        value += text[j];
        j++;
      }
      if (j >= text.length) throw new Error(`unterminated " in: ${text}`);
      word = (word ?? '') + value;
      i = j + 1;
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[i + 1];
      i += 2;
    } else if (OPERATORS.some((op) => text.startsWith(op, i))) {
      if (cutAtOperator) {
        push();
        return { words, comment: undefined };
      }
      throw new Error(`shell operators are not supported here: ${text}`);
    } else if (c === '$' || c === '`') {
      throw new Error(`${c} expansions are not supported: ${text}`);
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  push();
  return { words, comment: undefined };
}

function toCommand(line: number, source: string, words: string[], comment: string | undefined): ShellCommand | undefined {
  const env: Record<string, string> = {};
  let k = 0;
  for (; k < words.length; k++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(words[k]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  const argv = words.slice(k);
  return argv.length === 0 ? undefined : { line, source, env, argv, comment };
}

/** The commands of an `sh` block, one per line (lines ending in `\` continue). */
export function parseShell(text: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let source = lines[i]!;
    while (source.endsWith('\\') && i + 1 < lines.length) source = source.slice(0, -1) + ' ' + lines[++i]!;
    const { words, comment } = splitWords(source);
    const command = toCommand(start + 1, source.trim(), words, comment);
    if (command) commands.push(command);
  }
  return commands;
}

/** The `ttl-advisor` commands in a workflow file's `run:` steps, each cut at its first shell operator. */
export function workflowCommands(text: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  text.split('\n').forEach((line, i) => {
    const at = line.search(/\b(npx\s+(--yes\s+)?)?ttl-advisor(@[\w.-]+)?\s/);
    if (at < 0 || line.trimStart().startsWith('#')) return;
    const source = line.slice(at);
    const { words } = splitWords(source, true);
    const command = toCommand(i + 1, source.trim(), words, undefined);
    if (command) commands.push(command);
  });
  return commands;
}

/** `# exit 1: …` → 1 */
export function exitCodeOf(comment: string | undefined): number | undefined {
  const m = /^exits?\s+(\d+)\b/.exec(comment ?? '');
  return m ? Number(m[1]) : undefined;
}

/**
 * The CLI's arguments when the command runs ttl-advisor (`npx [--yes] ttl-advisor[@version] …` or `ttl-advisor …`),
 * else undefined. A pinned version (the CI workflows pin one, so that a job never runs whatever the registry serves
 * that day) must be this package's: a release that does not update the docs fails here.
 */
export function ttlAdvisorArgs(argv: readonly string[]): string[] | undefined {
  let k = 0;
  if (argv[k] === 'npx') {
    k++;
    while (argv[k]?.startsWith('-')) k++;
  }
  const pinned = /^ttl-advisor@(.+)$/.exec(argv[k] ?? '');
  if (pinned && pinned[1] !== PACKAGE_VERSION) throw new Error(`${argv[k]} pins another version than this package's ${PACKAGE_VERSION}`);
  return argv[k] === 'ttl-advisor' || pinned ? argv.slice(k + 1) : undefined;
}
