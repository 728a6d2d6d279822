import { describe, expect, it } from 'vitest';
import { lineWriter } from '../../src/cli/io.js';

function capture(isTty: boolean) {
  let text = '';
  return { io: { isTty, stderr: (chunk: string) => void (text += chunk) }, text: () => text };
}

describe("the CLI's progress line (collect, watch)", () => {
  it('on a terminal: updated in place, and ended before any other line', () => {
    const out = capture(true);
    const say = lineWriter(out.io);
    say.line('collecting s (group g, consumer c) from redis://h:1 into x.db');
    say.progress('collected 1 entries');
    say.progress('collected 2 entries');
    say.line('stopped: 2 entries');
    expect(out.text()).toBe(
      'collecting s (group g, consumer c) from redis://h:1 into x.db\n' +
        '\r\u001b[2Kcollected 1 entries' +
        '\r\u001b[2Kcollected 2 entries' +
        '\r\u001b[2Kstopped: 2 entries\n',
    );
  });

  it('in a log: a line per report, no control characters', () => {
    const out = capture(false);
    const say = lineWriter(out.io);
    say.progress('collected 1 entries');
    say.line('stopped: 1 entries');
    expect(out.text()).toBe('collected 1 entries\nstopped: 1 entries\n');
  });
});
