// Runs `ttl-advisor report` (the built CLI) in a fresh process and prints, as
// one JSON line on stdout, its in-process time and peak RSS.
// The built code (`npm run bench` builds it first); a path computed at run time, so that type-checking
// the tests needs no dist/ (a fresh clone has none). Its types are the sources'.
const { run } = (await import(new URL('../../dist/cli/program.js', import.meta.url).href)) as typeof import('../../src/cli/program.js');

const started = performance.now();
let output = '';
const code = await run(['node', 'ttl-advisor', 'report', ...process.argv.slice(2)], {
  stdout: (t) => void (output += t),
  stderr: (t) => process.stderr.write(t),
  isTty: false,
  now: () => Date.now(),
});
const ms = performance.now() - started;
process.stdout.write(JSON.stringify({ code, ms, maxRssMb: process.resourceUsage().maxRSS / 1024 }) + '\n');
