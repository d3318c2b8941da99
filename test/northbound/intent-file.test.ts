import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exportYaml } from '../../northbound/cli/export-command.js';
import { FileError, parseApplyFile } from '../../northbound/intent-file.js';

/**
 * The files `weft apply -f` and `weft serve --restore` read (northbound/intent-file.ts): JSON, or
 * YAML of one or more documents read with the YAML 1.2 core schema, as `weft export` writes it.
 */
describe('parseApplyFile', () => {
  it('reads a JSON list, an {ops} object, and one item', async () => {
    expect(await parseApplyFile('[{"kind":"tenant","id":"t1"}]')).toEqual([{ kind: 'tenant', id: 't1' }]);
    expect(await parseApplyFile('{"ops":[{"kind":"tenant","id":"t1"}]}')).toEqual([
      { kind: 'tenant', id: 't1' },
    ]);
    expect(await parseApplyFile('{"kind":"tenant","id":"t1"}')).toEqual([{ kind: 'tenant', id: 't1' }]);
  });

  it('reads YAML documents one after another, an empty one as nothing', async () => {
    const text =
      '- kind: tenant\n  id: t1\n---\nops:\n  - kind: network\n    id: n1\n---\n---\nkind: endpoint\nid: e1\n';
    expect(await parseApplyFile(text)).toEqual([
      { kind: 'tenant', id: 't1' },
      { kind: 'network', id: 'n1' },
      { kind: 'endpoint', id: 'e1' },
    ]);
  });

  it('keeps YAML 1.2 core scalars: a date or yes stays text, numbers and booleans are what they say', async () => {
    const [item] = await parseApplyFile(
      'kind: tenant\nid: 2026-12-05\nname: yes\nvni: 0x10\nup: true\nnote: ~\n',
    );
    expect(item).toEqual({ kind: 'tenant', id: '2026-12-05', name: 'yes', vni: 16, up: true, note: null });
  });

  it('names what is wrong: a YAML error with its line and column, JSON-looking text as JSON', async () => {
    const error = async (text: string) => {
      const err = await parseApplyFile(text).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FileError);
      return (err as Error).message;
    };
    expect(await error('- kind: [unclosed\n')).toMatch(/^not valid YAML: .*\(2:1\)$/);
    expect(await error('kind: tenant\nkind: network\n')).toMatch(
      /^not valid YAML: duplicated mapping key \(2:1\)$/,
    );
    expect(await error('[{"kind": "tenant",]')).toMatch(/^not valid JSON: /);
  });

  it('reads back exactly what weft export writes, whatever the strings (property)', async () => {
    // Strings YAML could take for something else: dates, booleans, numbers, nulls, comments, keys.
    const tricky = fc.constantFrom(
      'yes',
      'no',
      'on',
      '2026-12-05',
      '0x10',
      '1e3',
      '~',
      'null',
      '- a',
      'a: b',
      '#x',
      "'q'",
      '"',
      '',
    );
    const text = fc.oneof(fc.string(), tricky);
    const body = fc.record({
      name: text,
      description: fc.option(text, { nil: undefined }),
      vni: fc.integer({ min: 1, max: 16_777_214 }),
      tags: fc.array(text, { maxLength: 3 }),
      enabled: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ id: text, body }), { maxLength: 5 }), async (rows) => {
        const ops = rows.map((r) => ({
          op: 'put',
          kind: 'network',
          id: r.id,
          body: JSON.parse(JSON.stringify(r.body)) as Record<string, unknown>,
        }));
        const file = await exportYaml(ops, '7', new Date(0));
        const back = await parseApplyFile(file);
        expect(back).toEqual(ops.map((o) => ({ kind: 'network', id: o.id, ...o.body })));
      }),
      { numRuns: 300 },
    );
  });
});
