import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OvsdbSchemaError } from '../../../southbound/ovsdb/errors.js';
import { RowStore } from '../../../southbound/ovsdb/row-store.js';
import { columnOf, parseSchema } from '../../../southbound/ovsdb/schema.js';
import { Transaction } from '../../../southbound/ovsdb/transaction.js';
import { applyDiff, decodeValue, encodeValue } from '../../../southbound/ovsdb/values.js';
import type { VswitchTables } from '../../../southbound/ovsdb/vswitch.js';

// The real schema OVS ships, so conversions are checked against the types ovsdb-server uses.
const schema = parseSchema(JSON.parse(readFileSync('/usr/share/openvswitch/vswitch.ovsschema', 'utf8')));
const col = (t: string, c: string) => columnOf(schema, t, c);
const U1 = '11111111-2222-3333-4444-555555555555';

describe('schema-driven value conversion', () => {
  it('decodes atoms, optional values, sets, maps and uuids by column type', () => {
    expect(decodeValue('br-int', col('Bridge', 'name'), 'name')).toBe('br-int');
    expect(decodeValue(['set', []], col('Interface', 'ofport'), 'ofport')).toBeNull();
    expect(decodeValue(7, col('Interface', 'ofport'), 'ofport')).toBe(7);
    expect(decodeValue('OpenFlow13', col('Bridge', 'protocols'), 'protocols')).toEqual(['OpenFlow13']);
    expect(decodeValue(['set', ['OpenFlow10', 'OpenFlow13']], col('Bridge', 'protocols'), 'p')).toEqual([
      'OpenFlow10',
      'OpenFlow13',
    ]);
    expect(decodeValue(['uuid', U1], col('Bridge', 'ports'), 'ports')).toEqual([U1]);
    expect(decodeValue(['map', [['a', 'b']]], col('Bridge', 'external_ids'), 'e')).toEqual(
      new Map([['a', 'b']]),
    );
    expect(decodeValue(['map', [[3, ['uuid', U1]]]], col('Bridge', 'flow_tables'), 'f')).toEqual(
      new Map([[3, U1]]),
    );
  });

  it('names the column and row when a value has the wrong type', () => {
    expect(() => decodeValue('x', col('Interface', 'ofport'), 'ofport', 'Interface', U1)).toThrow(
      `Interface.ofport of ${U1}: expected set of integer, got "x"`,
    );
    expect(() => decodeValue(['set', [1]], col('Bridge', 'external_ids'), 'external_ids')).toThrow(
      OvsdbSchemaError,
    );
  });

  it('encodes JS values, telling uuids from named-uuids', () => {
    expect(encodeValue([U1, 'newport'], col('Bridge', 'ports'), 'p')).toEqual([
      'set',
      [
        ['uuid', U1],
        ['named-uuid', 'newport'],
      ],
    ]);
    expect(encodeValue({ k: 'v' }, col('Bridge', 'other_config'), 'o')).toEqual(['map', [['k', 'v']]]);
    expect(encodeValue(null, col('Bridge', 'fail_mode'), 'f')).toEqual(['set', []]);
    expect(encodeValue('secure', col('Bridge', 'fail_mode'), 'f')).toEqual(['set', ['secure']]);
    expect(() => encodeValue('sometimes', col('Bridge', 'fail_mode'), 'Bridge.fail_mode')).toThrow(
      'Bridge.fail_mode: "sometimes" is not one of standalone, secure',
    );
    expect(() => encodeValue(70000, col('Interface', 'ofport_request'), 'o')).toThrow(/outside \[1, 65279\]/);
    expect(() => encodeValue([], col('Port', 'interfaces'), 'Port.interfaces')).toThrow(/0 elements, want 1/);
    expect(() => encodeValue('not a uuid!', col('Bridge', 'ports'), 'p')).toThrow(/expected uuid/);
  });

  it('applies update2 diffs: single values replaced, sets toggled, maps merged', () => {
    expect(applyDiff('standalone', 'secure', col('Bridge', 'fail_mode'))).toBe('secure');
    expect(applyDiff('secure', null, col('Bridge', 'fail_mode'))).toBeNull();
    expect(
      applyDiff(['OpenFlow10', 'OpenFlow13'], ['OpenFlow10', 'OpenFlow14'], col('Bridge', 'protocols')),
    ).toEqual(['OpenFlow13', 'OpenFlow14']);
    const old = new Map([
      ['keep', '1'],
      ['drop', '2'],
      ['change', '3'],
    ]);
    const diff = new Map([
      ['drop', '2'],
      ['change', '4'],
      ['add', '5'],
    ]);
    expect(applyDiff(old, diff, col('Bridge', 'external_ids'))).toEqual(
      new Map([
        ['keep', '1'],
        ['change', '4'],
        ['add', '5'],
      ]),
    );
    expect(old.get('drop')).toBe('2'); // the old value is not mutated
  });
});

describe('RowStore', () => {
  const columns = new Map([['Bridge', ['name', 'fail_mode', 'ports', 'external_ids']]]);

  it('fills omitted default columns, and reports each change once', () => {
    const store = new RowStore(schema, columns);
    const added = store.applyUpdates2({ Bridge: { [U1]: { initial: { name: 'br0' } } } });
    expect(added).toHaveLength(1);
    expect(store.rows('Bridge').get(U1)).toEqual({
      _uuid: U1,
      name: 'br0',
      fail_mode: null,
      ports: [],
      external_ids: new Map(),
    });
    const same = store.applyUpdates2({ Bridge: { [U1]: { insert: { name: 'br0' } } } });
    expect(same).toEqual([]);
    const changed = store.applyUpdates2({
      Bridge: { [U1]: { modify: { external_ids: ['map', [['a', 'b']]] } } },
    });
    expect(changed).toMatchObject([{ kind: 'changed', old: { external_ids: new Map() } }]);
    expect(store.rows('Bridge').get(U1)!.external_ids).toEqual(new Map([['a', 'b']]));
    expect(store.applyUpdates2({ Bridge: { [U1]: { delete: null } } })).toMatchObject([{ kind: 'removed' }]);
    expect(store.rows('Bridge').size).toBe(0);
  });

  it('resyncs from a full snapshot: only real differences come out', () => {
    const store = new RowStore(schema, columns);
    const U2 = U1.replace('1111', '2222');
    const U3 = U1.replace('1111', '3333');
    store.applyUpdates2({ Bridge: { [U1]: { initial: { name: 'a' } }, [U2]: { initial: { name: 'b' } } } });
    const snapshot = new RowStore(schema, columns);
    snapshot.applyUpdates2({
      Bridge: { [U1]: { initial: { name: 'a' } }, [U3]: { initial: { name: 'c' } } },
    });
    const changes = store.replaceAll(snapshot).map((c) => `${c.kind} ${c.row.name}`);
    expect(changes.sort()).toEqual(['added c', 'removed b']);
  });

  it('applies RFC 7047 update (old/new) messages', () => {
    const store = new RowStore(schema, columns);
    store.applyUpdates({ Bridge: { [U1]: { new: { name: 'a', fail_mode: 'secure' } } } });
    expect(store.rows('Bridge').get(U1)!.fail_mode).toBe('secure');
    store.applyUpdates({ Bridge: { [U1]: { old: { name: 'a' } } } });
    expect(store.rows('Bridge').size).toBe(0);
  });
});

describe('Transaction builder', () => {
  it('produces RFC 7047 operations', () => {
    const t = new Transaction<VswitchTables>(schema);
    t.insert('Port', { name: 'p', interfaces: ['i'] }, 'p')
      .update('Bridge', [['name', '==', 'br0']], { fail_mode: 'secure' })
      .mutate(
        'Bridge',
        [['_uuid', '==', U1]],
        [
          ['external_ids', 'delete', ['k']],
          ['ports', 'insert', ['p']],
        ],
      )
      .wait('Bridge', [['name', '==', 'br0']], ['fail_mode'], '!=', [{ fail_mode: null }], 100)
      .delete('Port', [['name', '==', 'x']])
      .select('Interface', [['ofport', '>', 0]], ['name'])
      .commit(true)
      .comment('c')
      .assert('lk')
      .abort();
    expect(t.ops).toEqual([
      {
        op: 'insert',
        table: 'Port',
        row: { name: 'p', interfaces: ['set', [['named-uuid', 'i']]] },
        'uuid-name': 'p',
      },
      {
        op: 'update',
        table: 'Bridge',
        where: [['name', '==', 'br0']],
        row: { fail_mode: ['set', ['secure']] },
      },
      {
        op: 'mutate',
        table: 'Bridge',
        where: [['_uuid', '==', ['uuid', U1]]],
        mutations: [
          ['external_ids', 'delete', ['set', ['k']]],
          ['ports', 'insert', ['set', [['named-uuid', 'p']]]],
        ],
      },
      {
        op: 'wait',
        table: 'Bridge',
        where: [['name', '==', 'br0']],
        columns: ['fail_mode'],
        until: '!=',
        rows: [{ fail_mode: ['set', []] }],
        timeout: 100,
      },
      { op: 'delete', table: 'Port', where: [['name', '==', 'x']] },
      { op: 'select', table: 'Interface', where: [['ofport', '>', 0]], columns: ['name'] },
      { op: 'commit', durable: true },
      { op: 'comment', comment: 'c' },
      { op: 'assert', lock: 'lk' },
      { op: 'abort' },
    ]);
  });

  it('turns the first failed operation into an OvsdbError naming it', () => {
    const t = new Transaction<VswitchTables>(schema);
    t.comment('a').comment('b');
    expect(() =>
      t.decodeResults([{}, {}, { error: 'constraint violation', details: 'duplicate name' }]),
    ).toThrow('transact (operation 2) failed: constraint violation: duplicate name');
    expect(() => t.decodeResults([{}])).toThrow(/1 results for 2 operations/);
  });
});
