// Module hooks (run on the loader thread): append each loaded URL to a file.
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data?.file;
}

export async function load(url, context, nextLoad) {
  if (file) appendFileSync(file, url + '\n');
  return nextLoad(url, context);
}
