import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';

/** Runs the CLI in-process with captured output. */
export async function runCli(args: string[], now = Date.now()): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: Io = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), isTty: false, now: () => now };
  const code = await run(['node', 'ttl-advisor', ...args], io);
  return { code, stdout, stderr };
}
