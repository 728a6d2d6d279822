import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { built } from '../helpers/built.js';
import { startChild } from '../helpers/child.js';

/**
 * Issue 22, item 7: a recorder whose `record()` returns a rejecting promise (an
 * `async record()` whose backend is down) used to crash the host with an
 * unhandled rejection, through `withLock` and through `instrument`. Each case
 * runs in a process of its own with Node's default `--unhandled-rejections=throw`,
 * so an unhandled rejection would end it as it ends a service: exit code 1.
 */

const url = inject('redisUrl');
const child = built('test/helpers/rejecting-recorder-child.ts');
const running: ChildProcess[] = [];
afterAll(() => {
  for (const proc of running) if (proc.exitCode === null) proc.kill('SIGKILL');
});

interface Report {
  results: unknown[];
  recordCalls: number;
  failures: number;
  warnings: string[];
  recorded?: Record<string, number>;
}

async function runService(door: 'withLock' | 'instrument' | 'bare', client: 'ioredis' | 'node-redis') {
  const c = startChild(process.execPath, [child, door, client, url], running);
  const { code } = await c.exited;
  const line = c.output().split('\n').find((l) => l.startsWith('{'));
  return { code, output: c.output(), report: line === undefined ? undefined : (JSON.parse(line) as Report) };
}

describe('item 7: an async record() that rejects', () => {
  it.each(['ioredis', 'node-redis'] as const)('item 7 (withLock, %s): no unhandled rejection, every section returns, each failure counted and said once', async (client) => {
    const { code, output, report } = await runService('withLock', client);
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/unhandled|the metrics backend is down\n\s+at /i);
    expect(report).toMatchObject({ results: ['section 0 done', 'section 1 done', 'section 2 done'], recordCalls: 3, failures: 3 });
    expect(report!.warnings).toEqual([expect.stringMatching(/^TTL_ADVISOR_RECORDER_FAILED: .*record\(\) failed \(the metrics backend is down\)/)]);
  });

  it.each(['ioredis', 'node-redis'] as const)('item 7 (instrument, %s): no unhandled rejection, every command resolves, each failure counted and said once', async (client) => {
    const { code, output, report } = await runService('instrument', client);
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/unhandled|the metrics backend is down\n\s+at /i);
    // node-redlock's using() returns the section's value; the hand-written lock's SET and release their replies
    const expected = client === 'ioredis' ? ['section 0 done', 'section 1 done', 'section 2 done'] : ['OK', 1, 'OK', 1, 'OK', 1];
    expect(report).toMatchObject({ results: expected, recordCalls: 3, failures: 3, recorded: { released: 3 } });
    expect(report!.warnings).toEqual([expect.stringMatching(/^TTL_ADVISOR_RECORDER_FAILED: .*record\(\) failed \(the metrics backend is down\)/)]);
  });

  it('item 7 control: the same recorder called by a door that does not guard it ends the process', async () => {
    const { code, output, report } = await runService('bare', 'ioredis');
    expect(code).toBe(1);
    expect(output).toMatch(/Error: the metrics backend is down/);
    expect(report).toBeUndefined(); // it never got as far as reporting
  });
});
