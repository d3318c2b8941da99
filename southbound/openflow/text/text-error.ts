/** A flow/group text that does not parse: names the offending token. */
export class OfTextError extends Error {
  override name = 'OfTextError';
  constructor(
    readonly token: string,
    readonly reason: string,
  ) {
    super(`'${token}': ${reason}`);
  }
}

/** Splits on `sep` outside parentheses; throws on unbalanced parentheses. */
export function splitTop(s: string, seps: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '(') depth++;
    else if (c === ')') {
      if (--depth < 0) throw new OfTextError(s, `unbalanced ')' at position ${i}`);
    } else if (depth === 0 && seps.includes(c)) {
      if (i > start) out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new OfTextError(s, 'unbalanced parentheses');
  if (s.length > start) out.push(s.slice(start));
  return out;
}

/** "key=value", "key:value" or "key(value)" -> [key, value]; value undefined for a bare key. */
export function keyValue(tok: string, allowColon = true): [string, string | undefined] {
  for (let i = 0; i < tok.length; i++) {
    const c = tok[i];
    if (c === '=' || (allowColon && c === ':')) return [tok.slice(0, i), tok.slice(i + 1)];
    if (c === '(') {
      if (!tok.endsWith(')')) throw new OfTextError(tok, 'missing closing parenthesis');
      return [tok.slice(0, i), tok.slice(i + 1, -1)];
    }
  }
  return [tok, undefined];
}
