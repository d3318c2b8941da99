/** Plain-text rendering of API objects for humans: aligned tables and key/value blocks. */

export interface Column {
  header: string;
  /** Value of this column for one object (already a string). */
  value(o: Record<string, unknown>): string;
}

/** A cell value: lists joined by commas, absent values as '-'. */
export const cell = (v: unknown): string => {
  if (v === undefined || v === null || v === '') return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(cell).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

export const col = (header: string, field: string): Column => ({ header, value: (o) => cell(o[field]) });

export const table = (rows: Array<Record<string, unknown>>, columns: Column[]): string => {
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), ...cells.map(line)].join('\n')}\n`;
};

/**
 * One object as `key: value` lines in field order; nested arrays of objects as indented rows.
 * `render` writes the fields it names its own way (e.g. an endpoint's rate limits with units).
 */
export const details = (
  o: Record<string, unknown>,
  render: Record<string, (value: unknown) => string> = {},
): string => {
  const keys = Object.keys(o);
  const width = Math.max(...keys.map((k) => k.length));
  const lines: string[] = [];
  for (const k of keys) {
    const v = o[k];
    const own = Object.hasOwn(render, k) ? render[k] : undefined;
    if (own) lines.push(`${`${k}:`.padEnd(width + 1)} ${own(v)}`);
    else if (Array.isArray(v) && v.some((x) => x !== null && typeof x === 'object')) {
      lines.push(`${`${k}:`.padEnd(width + 1)}`);
      for (const item of v) lines.push(`  - ${cell(item)}`);
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      lines.push(
        `${`${k}:`.padEnd(width + 1)} ${Object.entries(v)
          .map(([a, b]) => `${a}=${cell(b)}`)
          .join(' ')}`,
      );
    } else {
      lines.push(`${`${k}:`.padEnd(width + 1)} ${cell(v)}`);
    }
  }
  return `${lines.join('\n')}\n`;
};
