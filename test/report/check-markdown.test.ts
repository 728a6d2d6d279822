import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { markdownText } from '../../src/report/markdown.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const HOSTILE =
  '![pixel](https://evil.example/p.png) [click](https://evil.example) <img src=x onerror=alert(1)> <b>bold</b> ' +
  '@payments-team cc @octocat https://evil.example www.evil.example someone@evil.example | pipe `tick` **strong**';

/** What GitHub would show: the GFM HTML, and its text outside code spans (where mentions are made). */
function rendered(markdown: string): { html: string; textOutsideCode: string } {
  const html = marked.parse(markdown, { gfm: true, async: false });
  const textOutsideCode = html.replace(/<code>[\s\S]*?<\/code>/g, ' ').replace(/<[^>]+>/g, ' ');
  return { html, textOutsideCode };
}

describe('user text in the Markdown a bot posts to PRs', () => {
  it('renders as text: no link, image, HTML tag or mention', () => {
    const { html, textOutsideCode } = rendered(`| a | b |\n|---|---|\n| x | ${markdownText(HOSTILE)} |\n`);
    expect(html).not.toMatch(/<a |<img|<b>|onerror=alert[^<]*>/);
    expect(textOutsideCode).not.toMatch(/(^|[^\w`])@[A-Za-z0-9-]+/);
    // Everything still reads as written.
    expect(html.replace(/<[^>]+>/g, '')).toContain('payments-team');
    // Control: the same text unescaped renders links, an image, HTML and mentions.
    const raw = rendered(HOSTILE);
    expect(raw.html).toMatch(/<img src="https:\/\/evil/);
    expect(raw.html).toMatch(/<a href="https:\/\/evil/);
    expect(raw.textOutsideCode).toMatch(/@payments-team/);
  });

  it('check puts a pinned entry’s reason in the comment as text', async () => {
    const db = buildDb(dir, 'check.db');
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ locks: { 'payment:lock:order:{id}': { ttlMs: 1000, pinned: true, reason: HOSTILE } } }));
    const { stdout } = await runCli(['check', '--db', db, '--policy', policy]);
    expect(stdout).toContain('pinned');
    const { html, textOutsideCode } = rendered(stdout);
    expect(html).not.toMatch(/<a |<img|<b>/);
    expect(textOutsideCode).not.toMatch(/(^|[^\w`])@[A-Za-z0-9-]+/);
  });
});
