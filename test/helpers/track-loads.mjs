// Preloaded with --import: records every ES module the process loads into the
// file named by TRACK_LOADS_FILE, one URL a line (CommonJS modules are in
// require.cache; native addons in process.report's sharedObjects).
import { register } from 'node:module';

register('./track-loads-hooks.mjs', import.meta.url, { data: { file: process.env.TRACK_LOADS_FILE } });
