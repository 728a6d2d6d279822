// The CLI as a user runs it, in a child process, saying at exit how much memory it held at its peak and how much
// CPU it used: the tests of hostile input (K1, P1, P4) read them. Run from its transpiled copy (see built.ts).
process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(`\nmeasured: maxRssKiB=${usage.maxRSS} cpuMs=${Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000)}\n`);
});
await import('../../src/cli/main.js');
