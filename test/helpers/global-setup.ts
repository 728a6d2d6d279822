import { pathToFileURL } from 'node:url';
import type { TestProject } from 'vitest/node';
import { buildForChildren, built } from './built.js';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/**
 * Transpiles the sources for the child processes and recorder threads (see built.ts), again
 * before each rerun in watch mode so that they never run a stale copy; then one shared
 * redis-server for the suite, unless REDIS_URL points at one. Tests that kill Redis start their own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildForChildren();
  project.onTestsRerun(() => buildForChildren());
  // Read by src/record/writer/spawn.ts when it runs from the TypeScript sources; the test workers inherit it.
  process.env.TTL_ADVISOR_SOURCE_THREAD = pathToFileURL(built('src/record/writer/thread.ts')).href;
  if (process.env.REDIS_URL) {
    project.provide('redisUrl', process.env.REDIS_URL);
    return async () => undefined;
  }
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
