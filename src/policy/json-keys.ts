/**
 * The first key that appears twice in one JSON object of `text` (JSON.parse
 * keeps the last silently), with its line; `undefined` when none does. Expects
 * text that JSON.parse accepts. Linear: one pass over the text.
 */
export function duplicateKey(text: string): { key: string; line: number } | undefined {
  const objects: (Set<string> | undefined)[] = []; // one entry per open object or array (undefined for arrays)
  let expectKey = false;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    else if (c === '{') {
      objects.push(new Set());
      expectKey = true;
    } else if (c === '[') objects.push(undefined);
    else if (c === '}' || c === ']') {
      objects.pop();
      expectKey = false;
    } else if (c === ',') expectKey = objects.at(-1) !== undefined;
    else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const keys = objects.at(-1)!;
        if (keys.has(key)) return { key, line };
        keys.add(key);
        expectKey = false;
      }
      i = end;
    }
  }
  return undefined;
}
