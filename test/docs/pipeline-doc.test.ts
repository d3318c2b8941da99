import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PIPELINE } from '../../controller/pipeline/tables.js';

// docs/PIPELINE.md must list exactly the tables the code declares, with their misses.
describe('docs/PIPELINE.md', () => {
  const doc = readFileSync(new URL('../../docs/PIPELINE.md', import.meta.url), 'utf8');
  const rows = [
    ...doc.matchAll(/^\|\s*(\d+)\s*\|\s*([a-z0-9-]+)\s*\|.*\|\s*(drop|controller|goto \d+)\s*\|$/gm),
  ].map((m) => [Number(m[1]), m[2], m[3]]);

  it('lists every declared table, in order, with its miss action', () => {
    const declared = PIPELINE.map((t) => [
      t.id,
      t.name,
      t.miss.kind === 'goto' ? `goto ${t.miss.table}` : t.miss.kind,
    ]);
    expect(rows).toEqual(declared);
  });
});
